// `presk dump --stage sensitivity` through the binary: layernorm's ranked table and JSON (b's
// cotangent is Σ over T rows of 1 per element; the literal ε is unknown, never 0; an add's
// operand of its shape shares its sensitivity), gpt_tiny with only literals and integer-valued
// slices unknown, and the usage errors.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/run_command.h"

namespace presk::testing {
namespace {

const std::string kExamples = std::string(PRESK_SOURCE_DIR) + "/examples/";
const std::string kLayernorm = " --stage sensitivity " + kExamples + "layernorm.psk --entry normalize --const D=4 --dim T=3";

nlohmann::json dump_json(const std::string& arguments) {
  CommandResult result = run_command(presk() + " dump" + arguments + " --json", false);
  EXPECT_EQ(result.status, 0) << arguments;
  return nlohmann::json::parse(result.output);
}

const nlohmann::json& row(const nlohmann::json& dump, const std::string& name) {
  for (const nlohmann::json& r : dump["rows"]) {
    if (r["name"] == name) return r;
  }
  throw std::out_of_range(name);
}

TEST(DumpSensitivity, LayernormJson) {
  nlohmann::json dump = dump_json(kLayernorm + " --bits 128");
  EXPECT_EQ(dump["bits"], 128);
  EXPECT_EQ(row(dump, "b")["total"], 12.0);  // T·D ones
  EXPECT_EQ(row(dump, "b")["per_element"], 3.0);
  EXPECT_EQ(row(dump, "b")["elements"], 4);
  EXPECT_EQ(row(dump, "normalize/%0")["total"], 12.0);  // the entry's result: the seed
  EXPECT_EQ(row(dump, "LayerNorm.apply/%11")["total"], 12.0);  // the callee's result: the cotangent
  // %11 = add(%9, %10): %9 has the add's shape and receives ḡ itself.
  EXPECT_EQ(row(dump, "LayerNorm.apply/%9")["total"], row(dump, "LayerNorm.apply/%11")["total"]);
  const nlohmann::json& epsilon = row(dump, "LayerNorm.apply/%4");
  EXPECT_EQ(epsilon["op"], "literal");
  EXPECT_TRUE(epsilon["total"].is_null());
  EXPECT_TRUE(epsilon["per_element"].is_null());
  // Ranked: known totals non-increasing, then the unknown ones.
  bool unknown_seen = false;
  double previous = 1e300;
  for (const nlohmann::json& r : dump["rows"]) {
    if (r["total"].is_null()) {
      unknown_seen = true;
      continue;
    }
    EXPECT_FALSE(unknown_seen) << r["name"];
    EXPECT_LE(r["total"].get<double>(), previous) << r["name"];
    previous = r["total"].get<double>();
  }
}

TEST(DumpSensitivity, LayernormTable) {
  CommandResult result = run_command(presk() + " dump" + kLayernorm, false);
  ASSERT_EQ(result.status, 0);
  std::istringstream lines(result.output);
  std::string line;
  for (int i = 0; i < 4; ++i) std::getline(lines, line);  // two comments, the header, the first row
  EXPECT_EQ(line.rfind("parameter  b ", 0), 0u) << result.output;  // ties keep parameters first
  EXPECT_NE(line.find("1.200000e+01    3.000000e+00"), std::string::npos) << line;
  EXPECT_NE(result.output.find("literal                 1         unknown         unknown"), std::string::npos)
      << result.output;
}

TEST(DumpSensitivity, GptTinyOnlyLiteralsAndIntegerSitesUnknown) {
  nlohmann::json dump = dump_json(" --stage sensitivity " + kExamples + "gpt_tiny.psk --entry loss --dim T=4 --bits 64");
  std::set<std::string> unknown_ops;
  for (const nlohmann::json& r : dump["rows"]) {
    if (r["total"].is_null()) unknown_ops.insert(r["op"].get<std::string>());
  }
  EXPECT_EQ(unknown_ops, (std::set<std::string>{"literal", "slice"}));  // slice: the Z tokens
  EXPECT_EQ(row(dump, "loss/%3")["total"], 1.0);
}

TEST(DumpSensitivity, UsageErrors) {
  CommandResult bits = run_command(presk() + " dump --stage ir " + kExamples + "layernorm.psk --bits 64");
  EXPECT_EQ(bits.status, 2);
  EXPECT_NE(bits.output.find("E0446"), std::string::npos) << bits.output;
  CommandResult no_entry = run_command(presk() + " dump --stage sensitivity " + kExamples + "layernorm.psk");
  EXPECT_EQ(no_entry.status, 2);
  EXPECT_NE(no_entry.output.find("E0446"), std::string::npos) << no_entry.output;
  CommandResult pir = run_command(presk() + " dump --stage sensitivity " +
                                  std::string(PRESK_SOURCE_DIR) + "/tests/ad/golden/layernorm_vjp.pir --entry normalize");
  EXPECT_EQ(pir.status, 2);
  EXPECT_NE(pir.output.find("E0448"), std::string::npos) << pir.output;
}

}  // namespace
}  // namespace presk::testing
