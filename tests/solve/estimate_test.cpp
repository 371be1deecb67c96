// The solver's phases on a program held in memory (examples/mlp.psk with an envelope made up
// here): which sites read each value, the estimate's reader rule, the rules, the greedy
// proposal against its target and the exhaustive optimum, and the menu's errors.
#include <gtest/gtest.h>

#include "common/error_code.h"
#include "lang/lang_test_util.h"
#include "solve/propose.h"
#include "solve/readers.h"

namespace presk::solve {
namespace {

ir::Program mlp() {
  return lang::compile(lang::read_source(lang::testing::repo_path("examples/mlp.psk")),
                       lang::testing::options_with({{"B", 4}}, {}, "loss"));
}

// An envelope of every typable site and parameter: max |v| = 1, roundings u(d)/2, every
// sensitivity 1 but Hidden.apply/%3's (unknown).
precision::Envelope made_up_envelope(const ir::Program& program) {
  precision::Envelope envelope;
  for (const ir::Function& function : program.functions) {
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      if (function.lets[i].type.kind != ir::ElemKind::Real) continue;
      precision::SiteEnvelope site;
      site.site = function.site_name(i);
      site.op = ir::op_name(function.lets[i].op);
      site.elements = site.elements_per_sample = function.lets[i].type.element_count();
      site.max_abs = 1;
      site.rounding = {0x1p-54, 0x1p-25, 0x1p-9};
      if (site.site != "Hidden.apply/%3") site.sensitivity = 1;
      envelope.sites.push_back(site);
    }
  }
  for (const ir::Param& param : program.params) {
    precision::ParameterEnvelope p;
    p.path = param.path;
    p.elements = param.type.element_count();
    p.max_abs = 1;
    p.rounding = {0, 0x1p-25, 0x1p-9};
    p.sensitivity = 1;
    envelope.parameters.push_back(p);
  }
  return envelope;
}

TEST(Readers, ThroughFieldsCallsAndResults) {
  const ir::Program program = mlp();
  const ReaderMap map = find_readers(program, *program.find_function("loss"));
  EXPECT_EQ(map.of_parameter.at("hidden.w"), std::set<std::string>{"Hidden.apply/%1"});
  EXPECT_EQ(map.of_parameter.at("out"), std::set<std::string>{"MLP.apply/%2"});
  // Hidden.apply's result reaches MLP.apply's contraction through the call.
  EXPECT_EQ(map.of_site.at("Hidden.apply/%4"), std::set<std::string>{"MLP.apply/%2"});
  EXPECT_EQ(map.of_site.at("MLP.apply/%4"), std::set<std::string>{"loss/%1"});
}

TEST(Estimate, AValueIsChargedAtItsNarrowestReader) {
  const ir::Program program = mlp();
  const Offer offer = make_offer(program, *program.find_function("loss"), made_up_envelope(program), default_menu(), 0);
  const int out = offer.find(ValueKind::parameter, "out");
  const int reader = offer.find(ValueKind::site, "MLP.apply/%2");
  ASSERT_GE(out, 0);
  ASSERT_GE(reader, 0);
  Assignment assignment(offer.values.size(), 0);
  EXPECT_EQ(term(offer, assignment, out, {}), 0);  // f64 at rest, read at f64
  assignment[reader] = 2;                          // the contraction in bf16 reads `out` in bf16
  EXPECT_EQ(term(offer, assignment, out, {}), 0x1p-9);
  EXPECT_EQ(term(offer, assignment, out, {true, EstimateForm::sum}), 0x1p-8);  // u(bf16)·max|v|
  const std::vector<int> affected = affected_by(offer, reader);
  EXPECT_NE(std::find(affected.begin(), affected.end(), out), affected.end());
}

TEST(Offer, RulesAndUnknownSensitivities) {
  const ir::Program program = mlp();
  const Offer offer = make_offer(program, *program.find_function("loss"), made_up_envelope(program), default_menu(), 0.05);
  EXPECT_EQ(offer.values[offer.find(ValueKind::site, "loss/%1")].exclusion, Exclusion::one_element);
  EXPECT_EQ(offer.values[offer.find(ValueKind::site, "Hidden.apply/%3")].exclusion, Exclusion::unknown_sensitivity);
  // bias: 10 elements, its first step saves 40 bytes, under 5 % of B.
  const Value& bias = offer.values[offer.find(ValueKind::parameter, "bias")];
  EXPECT_EQ(bias.first_saving, 40);
  EXPECT_LT(bias.first_saving, 0.05 * offer.all_f64_bytes);
  EXPECT_EQ(bias.exclusion, Exclusion::min_gain);
  EXPECT_TRUE(offer.values[offer.find(ValueKind::parameter, "hidden.w")].offered());
  EXPECT_EQ(offer.find(ValueKind::site, "MLP.apply/%0"), -1);  // a call hands on a value: not a stored value
}

TEST(Propose, GreedyStaysInsideAndTheOptimumIsNoWorse) {
  const ir::Program program = mlp();
  const Offer offer = make_offer(program, *program.find_function("loss"), made_up_envelope(program), default_menu(), 0);
  for (double target : {1e-7, 1e-5, 1e-3, 1e-2}) {
    Solution solution;
    propose_greedy(offer, {}, target, solution);
    EXPECT_LE(estimate(offer, solution.proposed, {}), target);
    const Assignment best = propose_exhaustive(offer, {}, target);
    EXPECT_LE(estimate(offer, best, {}), target);
    EXPECT_LE(traffic(offer, best), traffic(offer, solution.proposed));
    for (size_t v = 0; v < offer.values.size(); ++v) {
      if (!offer.values[v].offered()) {
        EXPECT_EQ(solution.proposed[v], 0) << offer.values[v].key;
      }
    }
  }
}

TEST(Menu, UnknownOrMisorderedTypesAreRefused) {
  EXPECT_EQ(default_menu().text(), "f64,f32,bf16");
  EXPECT_EQ(parse_menu("f64,bf16").rungs.size(), 2u);
  EXPECT_EQ(testing::error_code([] { parse_menu("f64,f16"); }), "E1101");
  EXPECT_EQ(testing::error_code([] { parse_menu("f64,bf16,f32"); }), "E1101");
  EXPECT_EQ(testing::error_code([] { parse_menu("f32,bf16"); }), "E1101");
  EXPECT_EQ(testing::error_code([] { parse_menu("f64,f64"); }), "E1101");
  EXPECT_EQ(testing::error_code([] { parse_menu(""); }), "E1101");
}

}  // namespace
}  // namespace presk::solve
