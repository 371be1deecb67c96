// The sensitivity hook (exec/reference/sensitivity.h) on examples/layernorm.psk with a seed of
// ones: the result site's adjoint has the seed's 1-norm; the adjoint of the `param "b"` site is
// b's cotangent (each element Σ over T rows of 1 = T); the adjoint of x̂·g with g = ones is the
// seed again; a site no marked adjoint reaches is unknown, never 0. Every other real site has a
// value, including both operands of an `add` (they share ḡ) and the result sites of called
// functions (their adjoint is the callee vjp's cotangent); on gpt_tiny (calls inside a fold)
// too.
#include <gtest/gtest.h>

#include <cmath>

#include "ad/vjp.h"
#include "exec/reference/sensitivity.h"
#include "lang/frontend.h"

namespace presk::testing {
namespace {

constexpr int64_t kRows = 3, kWidth = 4;

ir::Program compile_with_vjps(const std::string& file, const std::string& entry) {
  lang::FrontendOptions options;
  if (file == "layernorm.psk") options.consts = {{"D", kWidth}};
  options.dims = {{"T", kRows}};
  options.entry = entry;
  return ad::add_vjps(lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + file), options));
}

reference::Sensitivity run_sensitivity(const ir::Program& program, const std::string& name,
                                      int64_t token_range = 0) {
  const ir::Function& entry = reference::find_entry(program, name);
  reference::MpfrArith arith(256);
  std::vector<reference::Value<reference::MpfrArith>> arguments;
  for (const reference::HostTensor& host : reference::synthesize_inputs(entry, 3, token_range)) {
    arguments.push_back(reference::to_value(arith, host));
  }
  reference::ParameterStore parameters = reference::synthesize_parameters(program, 3, 1);  // g = 1, b = 0
  if (const ir::Param* head = program.find_param("head")) {  // zeros would stop every adjoint
    std::vector<double> values(static_cast<size_t>(head->type.element_count()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.1 * static_cast<double>(static_cast<int>(i % 7) - 3);
    parameters.set("head", std::move(values));
  }
  reference::RunOptions run;
  run.bits = 256;
  return reference::sensitivity(program, name, parameters, std::move(arguments), run);
}

// Every real, non-literal let of every differentiated function has a finite value.
void expect_real_sites_known(const ir::Program& program, const reference::Sensitivity& report) {
  for (const ir::Function& function : program.functions) {
    if (program.find_function(ad::vjp_name(function.name)) == nullptr) continue;
    for (uint32_t j = 0; j < function.lets.size(); ++j) {
      const ir::Let& let = function.lets[j];
      if (let.op == ir::Op::literal || let.type.is_tuple() || let.type.kind != ir::ElemKind::Real) continue;
      const std::optional<double>& value = report.sites.at(function.site_name(j));
      ASSERT_TRUE(value.has_value()) << function.site_name(j) << " is unknown";
      EXPECT_TRUE(std::isfinite(*value)) << function.site_name(j);
    }
  }
}

TEST(Sensitivity, LayernormAdjointNorms) {
  ir::Program program = compile_with_vjps("layernorm.psk", "normalize");
  const ir::Function& entry = reference::find_entry(program, "normalize");
  reference::Sensitivity report = run_sensitivity(program, "normalize");

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
  expect_real_sites_known(program, report);
  // The result site of the called LayerNorm.apply: its adjoint is the cotangent, the seed.
  EXPECT_EQ(report.sites.at(apply.site_name(apply.results[0].index)), seed_norm);
  // An operand of an `add` with the add's own shape receives ḡ itself: the same sensitivity
  // (x̂·g + b, and var + ε; the broadcast b and ε get ḡ summed instead).
  int adds = 0;
  for (uint32_t j = 0; j < apply.lets.size(); ++j) {
    const ir::Let& let = apply.lets[j];
    if (let.op != ir::Op::add) continue;
    for (ir::ValueRef operand : let.operands) {
      if (operand.kind != ir::ValueRef::Kind::Let || apply.type_of(operand) != let.type) continue;
      ++adds;
      EXPECT_EQ(report.sites.at(apply.site_name(operand.index)), report.sites.at(apply.site_name(j)))
          << apply.site_name(operand.index) << " as an operand of " << apply.site_name(j);
    }
  }
  EXPECT_GT(adds, 0);
}

// gpt_tiny: calls inside a folded stack of blocks, residual adds, an integer-valued embed index.
TEST(Sensitivity, GptTinyEveryRealSiteKnown) {
  ir::Program program = compile_with_vjps("gpt_tiny.psk", "loss");
  reference::Sensitivity report = run_sensitivity(program, "loss", 11);
  expect_real_sites_known(program, report);
  const ir::Function& loss = reference::find_entry(program, "loss");
  EXPECT_EQ(report.sites.at(loss.site_name(loss.results[0].index)), 1.0);  // scalar seed 1
  // Block.apply's result site: over both layers, the fold site's adjoint (layer 1's cotangent)
  // plus the x̄ layer 1 hands layer 0, so more than the fold site alone.
  const ir::Function& block = *program.find_function("Block.apply");
  const ir::Function& gpt = *program.find_function("GPT.apply");
  std::optional<double> fold_site;
  for (uint32_t j = 0; j < gpt.lets.size(); ++j) {
    if (gpt.lets[j].op == ir::Op::fold) fold_site = report.sites.at(gpt.site_name(j));
  }
  ASSERT_TRUE(fold_site.has_value());
  EXPECT_GT(*fold_site, 0);
  EXPECT_GT(*report.sites.at(block.site_name(block.results[0].index)), *fold_site);
}

}  // namespace
}  // namespace presk::testing
