// The solver's phases on a program held in memory (examples/mlp.psk with an envelope made up
// here): which sites read each value, the estimate's reader rule, the rules, the greedy
// proposal against its target and the exhaustive optimum, the integer rungs' frontier, the
// widening one rung at a time, and the menu's errors.
#include <gtest/gtest.h>

#include "common/error_code.h"
#include "lang/lang_test_util.h"
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "exec/native/kernels.h"
#include "precision/quant_axis.h"
#include "solve/propose.h"
#include "solve/readers.h"
#include "solve/verify.h"

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

// Every parameter's values made up: w_i = 0.3·sin(i + 1) (no two scales alike).
reference::ParameterStore made_up_parameters(const ir::Program& program) {
  reference::ParameterStore store;
  for (const ir::Param& param : program.params) {
    std::vector<double> values(static_cast<size_t>(param.type.element_count()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.3 * std::sin(static_cast<double>(i + 1));
    store.set(param.path, std::move(values));
  }
  return store;
}

// The integer rungs a matrix is offered form a frontier: past its float rungs each step saves
// bytes and moves its values more; and every integer rung of the menu is on the ladder or
// dominated by one there (no more bytes, no larger move) — each rung's bytes and move derived
// here from the quantizer itself.
TEST(Offer, IntegerRungsFormAFrontier) {
  const ir::Program program = mlp();
  const reference::ParameterStore store = made_up_parameters(program);
  const Menu menu = parse_menu("f64,f32,bf16,int8,int8/g8,int4,int4/g8");
  const Offer offer = make_offer(program, *program.find_function("loss"), made_up_envelope(program), menu, 0, &store);
  for (const char* key : {"hidden.w", "out"}) {
    const int index = offer.find(ValueKind::parameter, key);
    ASSERT_GE(index, 0) << key;
    const Value& value = offer.values[index];
    const ir::Param& param = *program.find_param(key);
    ASSERT_GT(value.ladder.size(), 4u) << key;  // the floats and at least two integer rungs
    for (size_t s = 1; s < value.ladder.size(); ++s) {
      EXPECT_LT(value.ladder[s].bytes, value.ladder[s - 1].bytes) << key << " step " << s;
      if (s >= 3) {
        EXPECT_GT(value.ladder[s].move, value.ladder[s - 1].move) << key << " step " << s;
      }
    }
    const std::vector<double>& w = *store.find(key);
    for (size_t r = 0; r < menu.rungs.size(); ++r) {
      const Rung& rung = menu.rungs[r];
      const int64_t axis = value.over + param.type.rank();
      if (!rung.integer() || (rung.group != 0 && param.type.shape[axis] % rung.group != 0)) continue;
      const exec::native::QuantizedWeights q = exec::native::quantize(
          w, param.type.shape, rung.bits, axis, rung.scheme == exec::native::QuantScheme::pow2, rung.group);
      double move = 0;
      for (size_t i = 0; i < w.size(); ++i) move = std::max(move, std::fabs(double{q.value(i)} - w[i]));
      const double bytes = precision::bytes_at_rest(param, rung.bits, value.over, rung.group);
      bool covered = false;
      for (size_t s = 3; s < value.ladder.size(); ++s) {
        covered |= value.ladder[s].rung == static_cast<int>(r) ||
                   (value.ladder[s].bytes <= bytes && value.ladder[s].move <= move);
      }
      EXPECT_TRUE(covered) << key << " " << rung.name << ": " << bytes << " bytes, move " << move;
    }
  }
}

// The measurements a widening loop is handed, in order (the loop is what is tested here; the
// native measurement is the solve tests' and the step's).
class GapsInTurn : public Measurements {
 public:
  explicit GapsInTurn(std::vector<double> gaps) : gaps_(std::move(gaps)) {}
  precision::MeasuredGap in_sample(const Offer&, const Assignment&) override { return {gaps_.at(next_++), 1}; }
  std::optional<precision::MeasuredGap> held_out(const Offer&, const Assignment&) override { return std::nullopt; }

 private:
  std::vector<double> gaps_;
  size_t next_ = 0;
};

// A matrix stored as int4 and measured outside twice widens one rung each time, along its own
// ladder: int4 → int8 → bf16, then the measurement is inside and nothing else moves.
TEST(Widening, IntegerRungsWidenOneRungAtATime) {
  const ir::Program program = mlp();
  const reference::ParameterStore store = made_up_parameters(program);
  const Offer offer = make_offer(program, *program.find_function("loss"), made_up_envelope(program),
                                 parse_menu("f64,f32,bf16,int8,int4"), 0, &store);
  const int w = offer.find(ValueKind::parameter, "hidden.w");
  ASSERT_GE(w, 0);
  Solution solution;
  solution.assignment.assign(offer.values.size(), 0);
  solution.assignment[w] = static_cast<int>(offer.values[w].ladder.size()) - 1;
  ASSERT_EQ(offer.rung(w, solution.assignment[w]).name.substr(0, 4), "int4");
  GapsInTurn gaps({1.0, 1.0, 0.1});
  const Budget budget{false, 0.5, 0.5, "--budget-abs"};
  verify_and_widen(offer, {}, budget, gaps, solution, {});
  std::vector<std::pair<std::string, std::string>> widened;
  for (const Move& move : solution.moves) {
    if (move.kind != MoveKind::widen) continue;
    EXPECT_EQ(move.value, w);
    widened.emplace_back(offer.rung(w, move.from).name.substr(0, 4), offer.rung(w, move.to).name.substr(0, 4));
  }
  const std::vector<std::pair<std::string, std::string>> expected = {{"int4", "int8"}, {"int8", "bf16"}};
  EXPECT_EQ(widened, expected);
  EXPECT_EQ(solution.rounds, 2);
  EXPECT_TRUE(solution.inside);
  EXPECT_EQ(offer.rung(w, solution.assignment[w]).name, "bf16");
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
