// Realizations: parsing, validation against a program (each error code and what its message
// names), the uniform names, and the inlined bf16 rounding against the support layer's.
#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "exec/native/realization.h"
#include "lang/frontend.h"
#include "support/number_format.h"

namespace presk::exec::native {
namespace {

ir::Program gpt_tiny() {
  auto source = lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/gpt_tiny.psk");
  lang::FrontendOptions options;
  options.dims = {{"T", 4}};
  return lang::compile(source, options);
}

// The code and message of the error that checking `text` raises ("" when it passes).
std::pair<std::string, std::string> check(const std::string& text, const ir::Program& program) {
  try {
    validate_realization(parse_realization(nlohmann::json::parse(text), "r.json"), program);
  } catch (const UserError& error) {
    return {error.code(), error.diagnostics().front().message};
  }
  return {"", ""};
}

TEST(Realization, ParsesEveryField) {
  const ir::Program program = gpt_tiny();
  const Realization r = parse_realization(nlohmann::json::parse(R"({"format": 1, "default": "bf16",
      "order": {"kind": "interleaved", "partials": 8}, "sites": {"LayerNorm.apply/%4": "f64"},
      "params": {"head": "f32"}, "quant": {"blocks.ff.up.w": {"bits": 4, "over": -1, "scheme": "pow2"},
                "blocks.ff.down.w": {"bits": 8, "over": -2, "group": 16}}})"), "r.json");
  validate_realization(r, program);
  EXPECT_EQ(r.default_type, RealType::bf16);
  EXPECT_EQ(r.order.kind, OrderKind::interleaved);
  EXPECT_EQ(r.order.partials, 8);
  EXPECT_EQ(r.site_type("LayerNorm.apply/%4"), RealType::f64);
  EXPECT_EQ(r.site_type("LayerNorm.apply/%5"), RealType::bf16);
  EXPECT_EQ(r.param_type("head"), RealType::f32);
  ASSERT_NE(r.param_quant("blocks.ff.up.w"), nullptr);
  EXPECT_EQ(r.param_quant("blocks.ff.up.w")->bits, 4);
  EXPECT_EQ(r.param_quant("blocks.ff.up.w")->group, 0);
  EXPECT_EQ(r.param_quant("blocks.ff.down.w")->group, 16);
  const Realization again = parse_realization(realization_to_json(r), "again");
  EXPECT_EQ(again.sites, r.sites);
  EXPECT_EQ(again.quant, r.quant);
  EXPECT_FALSE(realization_to_json(r)["quant"]["blocks.ff.up.w"].contains("group"));  // old files unchanged
}

TEST(Realization, UniformNames) {
  const ir::Program program = gpt_tiny();
  EXPECT_EQ(load_realization("f64", program).default_type, RealType::f64);
  EXPECT_EQ(load_realization("bf16", program).default_type, RealType::bf16);
  try {
    load_realization("fp32", program);
    FAIL();
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), "E0611");
  }
  try {
    load_realization("@/nonexistent/r.json", program);
    FAIL();
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), "E0600");
  }
}

TEST(Realization, ErrorsNameTheField) {
  const ir::Program program = gpt_tiny();
  struct Case {
    const char* text;
    const char* code;
    const char* named;  // a piece of the message
  };
  const Case cases[] = {
      {R"({"default": "f32"})", "E0601", "format"},
      {R"({"format": 2})", "E0601", "format"},
      {R"({"format": 1, "site": {}})", "E0602", "site"},
      {R"({"format": 1, "default": "f16"})", "E0603", "default"},
      {R"({"format": 1, "sites": {"LayerNorm.apply/%4": "int8"}})", "E0603", "LayerNorm.apply/%4"},
      {R"({"format": 1, "order": {"kind": "interleaved"}})", "E0604", "order.partials"},
      {R"({"format": 1, "order": {"kind": "blocked", "block": 0}})", "E0604", "order.block"},
      {R"({"format": 1, "order": {"kind": "random"}})", "E0604", "order.kind"},
      {R"({"format": 1, "order": {"kind": "sequential", "partials": 2}})", "E0604", "order.partials"},
      {R"({"format": 1, "sites": {"LayerNorm.apply/%99": "f64"}})", "E0605", "LayerNorm.apply/%"},
      {R"({"format": 1, "params": {"haed": "f64"}})", "E0606", "`head`"},
      {R"({"format": 1, "quant": {"blocks.ff.up.v": {"bits": 8}}})", "E0606", "blocks.ff.up.w"},
      {R"({"format": 1, "params": {"head": "bf16"}, "quant": {"head": {"bits": 8}}})", "E0607", "head"},
      {R"({"format": 1, "quant": {"head": {"bits": 6}}})", "E0608", "bits"},
      {R"({"format": 1, "quant": {"head": {"over": -2}}})", "E0608", "bits"},
      {R"({"format": 1, "quant": {"head": {"bits": 8, "over": 2}}})", "E0609", "over"},
      {R"({"format": 1, "quant": {"head": {"bits": 3}}})", "E0608", "bits"},
      {R"({"format": 1, "quant": {"head": {"bits": 8, "scheme": "nf4"}}})", "E0608", "scheme"},
      {R"({"format": 1, "quant": {"head": {"bits": 8, "group": 0}}})", "E0608", "group"},
      {R"({"format": 1, "quant": {"head": {"bits": 4, "group": 3}}})", "E0612", "group"},
      {R"({"format": 1, "sites": {"LayerNorm.apply/%8": "f64"}})", "E0610", "LayerNorm.apply/%8"},
  };
  for (const Case& c : cases) {
    const auto [code, message] = check(c.text, program);
    EXPECT_EQ(code, c.code) << c.text << ": " << message;
    EXPECT_NE(message.find(c.named), std::string::npos) << c.text << ": " << message;
  }
}

TEST(Numeric, Bf16MatchesSupport) {
  std::mt19937 rng(3);
  for (uint64_t i = 0; i < 20'000'000; ++i) {
    const uint32_t bits = i < 65536 ? static_cast<uint32_t>(i) << 16 | 0x8000u : static_cast<uint32_t>(rng());
    const float x = std::bit_cast<float>(bits);
    ASSERT_EQ(to_bf16(x), bf16_from_f32(x)) << std::hex << bits;
  }
}

}  // namespace
}  // namespace presk::exec::native
