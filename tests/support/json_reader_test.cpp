// The strict JSON reader (support/json_reader.h): what it accepts, the code of each refusal,
// and excerpts that stay short however large or deep the value.
#include "support/json_reader.h"

#include <gtest/gtest.h>

#include <utility>

#include "common/error_code.h"

namespace presk {
namespace {

using presk::testing::error_code;

nlohmann::json parse(const std::string& text) { return parse_user_json(text, {"t.json", "E0600", "fix it"}); }

std::string nested(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

TEST(JsonReader, AcceptsStrictJson) {
  nlohmann::json value = parse(R"({"sites": {"mse/%0": "f64", "a//b": "/* not a comment */"}, "n": [1, 2.5, -3e2]})");
  EXPECT_EQ(value["sites"]["a//b"], "/* not a comment */");
  EXPECT_EQ(value["n"][2], -300.0);
  EXPECT_EQ(parse(nested(kMaxJsonDepth)).size(), 1u);  // 64 levels: the most there may be
  EXPECT_EQ(parse(R"([{"a": 1}, {"a": 2}])").size(), 2u);  // one key in two objects
}

TEST(JsonReader, EachRefusalHasItsCode) {
  EXPECT_EQ(error_code([] { parse(nested(kMaxJsonDepth + 1)); }), "E0010");
  EXPECT_EQ(error_code([] { parse(R"({"a": {"b": 1, "b": 2}})"); }), "E0011");
  EXPECT_EQ(error_code([] { parse("[1, // two\n 2]"); }), "E0012");
  EXPECT_EQ(error_code([] { parse("\xEF\xBB\xBF[]"); }), "E0013");
  EXPECT_EQ(error_code([] { parse("[-1e999]"); }), "E0014");
  EXPECT_EQ(error_code([] { parse(R"({"a": 1,})"); }), "E0600");  // the reader's own code
  EXPECT_EQ(error_code([] { parse(""); }), "E0600");
}

TEST(JsonReader, DuplicateNamesItsPlace) {
  try {
    parse(R"({"sites": [{"rounding": {"f32": 1, "f32": 2}}]})");
    ADD_FAILURE() << "accepted";
  } catch (const UserError& error) {
    EXPECT_EQ(error.diagnostics().front().message,
              "t.json: key \"f32\" appears twice in the object at \"sites[].rounding\"");
  }
}

TEST(JsonReader, ExcerptsStayShort) {
  nlohmann::json deep = nlohmann::json::array();
  for (int i = 0; i < 10000; ++i) {  // moved, not copied: array({deep}) copies all i levels
    nlohmann::json outer = nlohmann::json::array();
    outer.push_back(std::move(deep));
    deep = std::move(outer);
  }
  EXPECT_LE(json_excerpt(deep).size(), 70u);
  EXPECT_EQ(json_excerpt(nlohmann::json(std::string(100000, 'x')), 8), "\"xxxxxxxx\"…");
  EXPECT_EQ(json_excerpt(nlohmann::json::parse(R"({"a": [1, 2], "b": null})")), R"({"a": [1, 2], "b": null})");
  EXPECT_EQ(text_excerpt("ℝℝℝ", 4), "\"ℝ\"…");  // never half a UTF-8 sequence
}

}  // namespace
}  // namespace presk
