// The predicted time of a training step (src/step/step_price.h, docs/step.md): the static run
// counts of a program with a call and a fold, counted by hand; all-f32 predicted below all-f64
// on gpt_tiny; the pieces of a price; and a profile with a missing class refused (E1202).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error_code.h"
#include "lang/frontend.h"
#include "step/step_price.h"
#include "step/synthetic_profile.h"
#include "support/atomic_file.h"
#include "support/input_file.h"
#include "support/temp_folder.h"
#include "train/batch_gradient.h"

namespace presk::step {
namespace {

using presk::testing::error_code;
using price_testing::Speeds;
using exec::native::RealType;
using price_testing::synthetic_profile;
using testing_support::TempFolder;

ir::Program compile_text(const std::string& text, int64_t t) {
  TempFolder folder;
  const std::string path = folder.file("p.psk");
  write_file_atomically(path, text);
  lang::FrontendOptions options;
  if (t > 0) options.dims = {{"T", t}};
  options.entry = "loss";
  options.training = true;
  return lang::compile(lang::read_source(path), options);
}

ir::Program tiny() {
  lang::FrontendOptions options;
  options.dims = {{"T", 8}};
  options.entry = "loss";
  options.training = true;
  return lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/gpt_tiny.psk"), options);
}

// Net.apply folds Layer.apply over a stack of 3; Layer.apply calls Sq.apply.
constexpr const char* kCallAndFold = R"(module Sq {
  fn apply(x : R[2]) -> R[2] = x * x
}
module Layer {
  param w : R[2, 2] = normal(0.5)
  param sq : Sq
  fn apply(x : R[2]) -> R[2] = sq.apply(tanh(x @ w))
}
module Net {
  param x0 : R[2] = ones
  param layers : stack{3} Layer
  fn apply() -> R[2] = fold layers over x0
}
entry loss(p : Net, tokens : Z[2]) -> R = sum(p.apply())
)";

// By hand, with 2 windows: loss.vjp runs twice; it calls Net.apply (2) and Net.apply.vjp (2).
// Layer.apply runs 3 times per Net.apply (fold) and 3 per Net.apply.vjp (its fold_trace): 12;
// Layer.apply.vjp 3 per Net.apply.vjp (fold_vjp): 6. Sq.apply: once per Layer.apply (12) and once
// per Layer.apply.vjp, which recomputes it (6): 18; Sq.apply.vjp once per Layer.apply.vjp: 6.
TEST(StepPrice, StaticRunsOfACallAndAFoldCountedByHand) {
  const ir::Program program = compile_text(kCallAndFold, 0);
  const train::GradientProgram gradient =
      train::make_gradient_program(program, "loss", train::parameter_layout(program), false);
  const std::map<std::string, double> runs = step_runs(gradient.program, gradient.vjp, 2);
  const std::map<std::string, double> expected = {{"loss.vjp", 2},       {"Net.apply", 2},     {"Net.apply.vjp", 2},
                                                  {"Layer.apply", 12},   {"Layer.apply.vjp", 6}, {"Sq.apply", 18},
                                                  {"Sq.apply.vjp", 6}};
  EXPECT_EQ(runs, expected);
}

// With a latency of 1 s and rates too high to count, the lets' price is their count times their
// function's runs: the pricing walk runs each function as often as step_runs counts.
TEST(StepPrice, ThePriceWalkRunsEachFunctionAsOftenAsStepRunsCounts) {
  for (const ir::Program& program : {compile_text(kCallAndFold, 0), tiny()}) {
    const train::GradientProgram gradient =
        train::make_gradient_program(program, "loss", train::parameter_layout(program), false);
    double expected = 0;
    for (const auto& [name, runs] : step_runs(gradient.program, gradient.vjp, 3)) {
      const ir::Function& function = *gradient.program.find_function(name);
      for (const ir::Let& let : function.lets) expected += exec::native::is_typable(let) ? runs : 0;
    }
    Speeds speeds;
    speeds.f64 = speeds.f32 = speeds.bf16 = speeds.bandwidth = speeds.bf16_bandwidth = 1e300;
    speeds.latency = 1;
    const StepPricer pricer(gradient.program, {gradient.vjp}, synthetic_profile(speeds), 3);
    EXPECT_EQ(pricer.price(exec::native::uniform_realization(RealType::f64)).lets, expected);
    EXPECT_GT(expected, 0);
  }
}

// A function in f32 between f64 callers pays the conversions of what it is handed and hands back:
// at the grain of functions the edges are at the calls.
TEST(StepPrice, ConversionsAtACallsBoundary) {
  const ir::Program program = compile_text(kCallAndFold, 0);
  const train::GradientProgram gradient =
      train::make_gradient_program(program, "loss", train::parameter_layout(program), false);
  Speeds speeds;
  speeds.conversion = 1;
  const StepPricer pricer(gradient.program, {gradient.vjp}, synthetic_profile(speeds), 1);
  exec::native::Realization sq = exec::native::uniform_realization(RealType::f64);
  const ir::Function& apply = *gradient.program.find_function("Sq.apply");
  for (uint32_t i = 0; i < apply.lets.size(); ++i) {
    if (exec::native::is_typable(apply.lets[i])) sq.sites[apply.site_name(i)] = RealType::f32;
  }
  // Sq.apply's x * x reads its f64 argument twice (2 elements each) in f32, on each of its 9 runs
  // (one window); the f32 result, read by f64 sites after the call, converts back as well.
  const StepPrice priced = pricer.price(sq);
  EXPECT_GE(priced.conversions, 9 * 2 * 2);
}

// Doubling every rate doubles every term but the latencies; the pieces add up.
TEST(StepPrice, PiecesAddUpAndScaleWithTheRates) {
  const ir::Program program = compile_text(kCallAndFold, 0);
  Speeds slow;
  slow.latency = 0;
  slow.conversion = 0;
  Speeds fast = slow;
  fast.f64 *= 2;
  fast.bandwidth *= 2;
  const auto f64 = exec::native::uniform_realization(RealType::f64);
  const StepPrice a = predict_step(program, "loss", f64, synthetic_profile(slow), 2);
  const StepPrice b = predict_step(program, "loss", f64, synthetic_profile(fast), 2);
  EXPECT_GT(a.lets, 0);
  EXPECT_GT(a.optimizer, 0);
  EXPECT_EQ(a.conversions, 0);
  EXPECT_DOUBLE_EQ(a.seconds, a.lets + a.conversions + a.optimizer);
  EXPECT_DOUBLE_EQ(b.seconds * 2, a.seconds);
  // AdamW on the 2 + 12 parameter elements: 7 accesses of 8 bytes at 4e9 B/s outweigh 12
  // operations at 1e9/s.
  EXPECT_DOUBLE_EQ(a.optimizer, kAdamWAccesses * 14 * 8 / slow.bandwidth);
}

// On a realistic profile (f32 at twice f64's rate, bf16 between, one byte rate, conversions paid) all-f32 is
// predicted faster than all-f64, and a mixed realization pays its edges.
TEST(StepPrice, AllF32BelowAllF64OnGptTiny) {
  const ir::Program program = tiny();
  const profile::Profile machine = synthetic_profile({});
  const double f64 = predict_step(program, "loss", exec::native::uniform_realization(RealType::f64), machine, 2).seconds;
  const double f32 = predict_step(program, "loss", exec::native::uniform_realization(RealType::f32), machine, 2).seconds;
  EXPECT_LT(f32, f64);
  EXPECT_GT(f32, f64 / 2);  // at most twice the rate and half the bytes; the latencies stay
  exec::native::Realization mixed = exec::native::uniform_realization(RealType::f64);
  const train::GradientProgram gradient = train::make_gradient_program(program, "loss", train::parameter_layout(program), false);
  for (const ir::Function& function : gradient.program.functions) {
    if (function.name != "FeedForward.apply") continue;
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      if (exec::native::is_typable(function.lets[i])) mixed.sites[function.site_name(i)] = RealType::f32;
    }
  }
  ASSERT_FALSE(mixed.sites.empty());
  EXPECT_GT(predict_step(program, "loss", mixed, machine, 2).conversions, 0);
}

TEST(StepPrice, AProfileWithAMissingClassIsRefused) {
  nlohmann::json json = profile::profile_to_json(synthetic_profile({}));
  ASSERT_TRUE(json["rooflines"].contains("normalization"));
  json["rooflines"].erase("normalization");
  TempFolder folder;
  const std::string path = folder.file("p.json");
  write_file_atomically(path, json.dump());
  EXPECT_EQ(error_code([&] { profile::read_profile(path); }), "E1202");
}

}  // namespace
}  // namespace presk::step
