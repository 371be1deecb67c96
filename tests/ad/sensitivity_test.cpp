// The sensitivity hook (exec/reference/sensitivity.h) on examples/layernorm.psk with a seed of
// ones: the result site's adjoint has the seed's 1-norm; the adjoint of the `param "b"` site is
// b's cotangent (each element Σ over T rows of 1 = T); the adjoint of x̂·g with g = ones is the
// seed again; a site no marked adjoint reaches is unknown, never 0.
#include <gtest/gtest.h>

#include "ad/vjp.h"
#include "exec/reference/sensitivity.h"
#include "lang/frontend.h"

namespace presk::testing {
namespace {

constexpr int64_t kRows = 3, kWidth = 4;

TEST(Sensitivity, LayernormAdjointNorms) {
  lang::FrontendOptions options;
  options.consts = {{"D", kWidth}};
  options.dims = {{"T", kRows}};
  options.entry = "normalize";
  ir::Program program = ad::add_vjps(
      lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/layernorm.psk"), options));
  const ir::Function& entry = reference::find_entry(program, "normalize");
  reference::MpfrArith arith(256);
  std::vector<reference::Value<reference::MpfrArith>> arguments;
  for (const reference::HostTensor& host : reference::synthesize_inputs(entry, 3, 0)) {
    arguments.push_back(reference::to_value(arith, host));
  }
  reference::ParameterStore parameters = reference::synthesize_parameters(program, 3, 1);  // g = 1, b = 0
  reference::RunOptions run;
  run.bits = 256;
  reference::Sensitivity report =
      reference::sensitivity(program, "normalize", parameters, std::move(arguments), run);

  const double seed_norm = kRows * kWidth;
  const ir::Function& apply = *program.find_function("LayerNorm.apply");
  ASSERT_EQ(entry.results[0].kind, ir::ValueRef::Kind::Let);
  EXPECT_EQ(report.sites.at(entry.site_name(entry.results[0].index)), seed_norm);
  uint32_t param_b = 0, scaled = 0;  // `param "b"`, and x̂ = xc·rsqrt(…) that g multiplies
  for (uint32_t j = 0; j < apply.lets.size(); ++j) {
    if (apply.lets[j].op == ir::Op::param && apply.lets[j].attrs.path == "b") param_b = j;
    if (apply.lets[j].op == ir::Op::param && apply.lets[j].attrs.path == "g") scaled = j - 1;
  }
  EXPECT_EQ(report.sites.at(apply.site_name(param_b)), seed_norm);
  EXPECT_EQ(report.parameters.at("b"), seed_norm);
  EXPECT_EQ(*report.sites.at(apply.site_name(param_b)), report.parameters.at("b"));
  EXPECT_EQ(report.sites.at(apply.site_name(scaled)), seed_norm);  // ∂L/∂x̂ = 1·g = 1
  ASSERT_TRUE(report.parameters.contains("g"));
  EXPECT_GT(report.parameters.at("g"), 0);
  // The literal 1e-5 is a site no adjoint reaches: unknown, not 0.
  for (uint32_t j = 0; j < apply.lets.size(); ++j) {
    if (apply.lets[j].op != ir::Op::literal) continue;
    EXPECT_FALSE(report.sites.at(apply.site_name(j)).has_value()) << apply.site_name(j);
  }
}

}  // namespace
}  // namespace presk::testing
