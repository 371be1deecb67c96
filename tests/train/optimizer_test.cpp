// The pieces of a training step that need no executor: the learning-rate schedule, AdamW's
// scalars and update, the batch and validation rows, and the token-window reader.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error_code.h"
#include "support/diagnostics.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"
#include "train/adamw.h"
#include "train/schedule.h"
#include "train/token_windows.h"

namespace presk::train {
namespace {

using testing_support::TempFolder;

using testing::error_code;

TEST(Schedule, WarmupIsLinearThenCosineEndsAtTheFloor) {
  Schedule s{ScheduleKind::cosine, 1e-3, 1e-4, 10, 110};
  EXPECT_EQ(learning_rate(s, 0), 1e-4);  // 1e-3 · 1/10, correctly rounded
  EXPECT_EQ(learning_rate(s, 4), 5e-4);
  EXPECT_EQ(learning_rate(s, 9), 1e-3);
  EXPECT_EQ(learning_rate(s, 10), 1e-3);           // cos 0 = 1
  EXPECT_DOUBLE_EQ(learning_rate(s, 60), 5.5e-4);  // halfway: the mean of peak and floor
  EXPECT_NEAR(learning_rate(s, 109), 1e-4, 3e-7);  // η_min itself is reached at step N
  s.kind = ScheduleKind::constant;
  EXPECT_EQ(learning_rate(s, 9), 1e-3);
  EXPECT_EQ(learning_rate(s, 100), 1e-3);
  EXPECT_EQ(schedule_from_name("cosine"), ScheduleKind::cosine);
  EXPECT_FALSE(schedule_from_name("linear").has_value());
}

TEST(AdamW, ScalarsAreRoundedOnceIntoTheMasterType) {
  AdamWOptions options;  // β₁ 0.9, β₂ 0.99, ε 1e-8, λ 0.1
  AdamWScalars f64 = adamw_scalars(options, 1e-3, 1, RealType::f64);
  EXPECT_EQ(f64.c1, 1.0 - 0.9);  // exact in binary64 (Sterbenz)
  EXPECT_EQ(f64.shrink, 1.0 - 1e-4);
  EXPECT_EQ(f64.step_size, 1e-3 / (1 - 0.9));    // both round to 0.01 here
  EXPECT_NEAR(f64.root_correction, 0.1, 1e-16);  // √(1 − 0.99)
  AdamWScalars f32 = adamw_scalars(options, 1e-3, 1, RealType::f32);
  EXPECT_EQ(f32.c1, static_cast<double>(0.1f));
  EXPECT_EQ(f32.eps, static_cast<double>(1e-8f));
}

// The first step of Adam moves each weight by about −η·sign(g) (m̂/√v̂ = g/|g|).
TEST(AdamW, FirstStepMovesBySignOfTheGradient) {
  AdamWOptions options;
  options.weight_decay = 0;
  std::vector<double> theta = {1, 1, 1}, m(3, 0.0), v(3, 0.0);
  const std::vector<double> gradient = {0.5, -2, 1e-3};
  adamw_update(adamw_scalars(options, 1e-2, 1, RealType::f64), RealType::f64, true, theta, m, v,
               gradient);
  EXPECT_NEAR(theta[0], 1 - 1e-2, 1e-9);
  EXPECT_NEAR(theta[1], 1 + 1e-2, 1e-9);
  EXPECT_NEAR(theta[2], 1 - 1e-2, 1e-6);
  EXPECT_EQ(m[1], (1.0 - 0.9) * -2);  // 1 − β is exact in binary64 for β ∈ [½, 1]
  EXPECT_EQ(v[1], (1.0 - 0.99) * 4);
}

// The update in f64 is exactly the documented sequence of roundings.
TEST(AdamW, UpdateIsTheDocumentedFormula) {
  AdamWOptions options;
  const AdamWScalars s = adamw_scalars(options, 3e-3, 7, RealType::f64);
  std::vector<double> theta = {0.25, -0.75}, m = {0.01, -0.02}, v = {1e-4, 4e-4};
  const std::vector<double> g = {0.3, 0.05};
  std::vector<double> expected = theta;
  for (size_t i = 0; i < 2; ++i) {
    const double mi = s.b1 * m[i] + s.c1 * g[i];
    const double vi = s.b2 * v[i] + s.c2 * (g[i] * g[i]);
    const double shrunk = expected[i] * s.shrink;
    expected[i] = shrunk - s.step_size * (mi / (std::sqrt(vi) / s.root_correction + s.eps));
  }
  adamw_update(s, RealType::f64, true, theta, m, v, g);
  EXPECT_EQ(theta, expected);
}

TEST(AdamW, Bf16KeepsEveryValueOnTheBf16Grid) {
  AdamWOptions options;
  std::vector<double> theta = {0.3, -1.7}, m(2, 0.0), v(2, 0.0);
  for (double& x : theta) x = round_to(x, ElementType::bf16);
  const std::vector<double> gradient = {0.123, -4.5};
  adamw_update(adamw_scalars(options, 1e-2, 1, RealType::bf16), RealType::bf16, true, theta, m, v,
               gradient);
  for (const std::vector<double>* values : {&theta, &m, &v}) {
    for (double x : *values) EXPECT_EQ(round_to(x, ElementType::bf16), x);
  }
}

TEST(AdamW, DecayAppliesToMatricesOnly) {
  EXPECT_TRUE(decays(2, 0));   // head : R[D, V]
  EXPECT_FALSE(decays(1, 0));  // ln_f.g : R[D]
  EXPECT_FALSE(decays(2, 1));  // blocks.ln1.g : R[L, D]
  EXPECT_TRUE(decays(3, 1));   // blocks.ff.up.w : R[L, D, F]
}

TEST(Batches, RowsArePureFunctionsOfSeedAndStep) {
  const std::vector<int64_t> a = batch_rows(5, 3, 8, 100);
  EXPECT_EQ(a, batch_rows(5, 3, 8, 100));
  EXPECT_NE(a, batch_rows(5, 4, 8, 100));
  EXPECT_NE(a, batch_rows(6, 3, 8, 100));
  for (int64_t row : a) EXPECT_TRUE(row >= 0 && row < 100);
  // Step s's windows are words s·B … s·B + B − 1 of one stream.
  const std::vector<int64_t> first_two = batch_rows(5, 0, 2, 100);
  EXPECT_EQ(batch_rows(5, 1, 1, 100).at(0), first_two.at(1));
  EXPECT_EQ(validation_rows(10, 4), (std::vector<int64_t>{0, 2, 5, 7}));
  EXPECT_EQ(validation_rows(3, 0), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(validation_rows(3, 9), (std::vector<int64_t>{0, 1, 2}));
}

TEST(TokenWindows, ReadsRowsAndRefusesOtherLayouts) {
  TempFolder folder;
  Tensor tokens(ElementType::i32, {3, 5});
  for (uint64_t i = 0; i < 15; ++i) tokens.set_integer(i, static_cast<int64_t>(i));
  write_safetensors(folder.file("t.safetensors"), {{"tokens", tokens}}, {{"source_sha256", "abc"}});
  TokenWindows windows(folder.file("t.safetensors"), 5, "--data");
  EXPECT_EQ(windows.count(), 3);
  EXPECT_EQ(windows.source_sha256(), "abc");
  Tensor row = windows.row(2);
  EXPECT_EQ(row.type(), ElementType::i64);
  EXPECT_EQ(row.get_integer(0), 10);
  EXPECT_EQ(row.get_integer(4), 14);
  EXPECT_EQ(error_code([&] { TokenWindows(folder.file("t.safetensors"), 9, "--data"); }), "E1000");
  write_safetensors(folder.file("x.safetensors"), {{"x", tokens}});
  EXPECT_EQ(error_code([&] { TokenWindows(folder.file("x.safetensors"), 5, "--val"); }), "E1000");
}

}  // namespace
}  // namespace presk::train
