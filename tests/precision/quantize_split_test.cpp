// The representation/arithmetic split on a program whose parts are computed by hand: y = x · w
// with x = [1, 0] reads w's first row. Under int8 absmax over −2 the column scales are
// f32(max|w_:j| / 127), each weight f32(q·s) with q = round(w/s); the exact output on the stored
// weights is that row, so the representation part is the row's largest move and, f64 computing
// 1·ŵ + 0·ŵ' exactly, the arithmetic part is 0.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/native/realization.h"
#include "lang/lang_test_util.h"
#include "precision/first_order.h"
#include "precision/quantize_split.h"
#include "support/diagnostics.h"

namespace presk::precision {
namespace {

const char* kProgram =
    "const N = 2\n"
    "module M {\n  param w : R[N, N] = zeros\n  fn apply(x : R[1, N]) -> R[1, N] = x · w\n}\n"
    "entry y(p : M, x : R[1, N]) -> R[1, N] = p.apply(x)\n";

struct Fixture {
  ir::Program program = lang::testing::compile_text(kProgram, lang::testing::options_with({}, {}, "y"));
  reference::ParameterStore parameters;
  SampleInputs inputs;
  Fixture() {
    parameters.set("w", {0.3, 0.7, 1.0, -0.5});
    const ir::Type type = program.find_function("y")->argument_types[0];
    inputs = [type](int64_t) { return std::vector<reference::HostTensor>{{type, {1.0, 0.0}, {}}}; };
  }
};

// f32(q·s), s = f32(m/127), q = round(w/s) to nearest (ties away, as no tie occurs here).
double dequantized(double w, double column_max) {
  const float s = static_cast<float>(column_max / 127);
  const double q = std::nearbyint(w / s);
  return static_cast<float>(q * s);
}

TEST(QuantizeSplit, Int8AbsmaxByHand) {
  Fixture f;
  nlohmann::json json = {{"format", 1}, {"default", "f64"}, {"quant", {{"w", {{"bits", 8}}}}}};
  const exec::native::Realization realization = exec::native::parse_realization(json, "test");
  exec::native::validate_realization(realization, f.program);
  const QuantizeSplit split =
      quantize_split(f.program, *f.program.find_function("y"), realization, f.parameters, 1, f.inputs, 128, 1);
  const double move0 = std::fabs(dequantized(0.3, 1.0) - 0.3), move1 = std::fabs(dequantized(0.7, 0.7) - 0.7);
  EXPECT_GT(move0, 0);
  EXPECT_DOUBLE_EQ(split.representation.absolute, std::max(move0, move1));
  EXPECT_EQ(split.representation.magnitude, 0.7);
  EXPECT_EQ(split.arithmetic.absolute, 0);
  EXPECT_DOUBLE_EQ(split.total.absolute, split.representation.absolute);
  EXPECT_EQ(split.weight_bytes, 4 + 2 * 4);  // four int8 and one f32 scale per column
  EXPECT_EQ(split.weight_bytes_f64, 32);
}

// Under f32 the weights round at rest (0.3 and 0.7 are not binary32 numbers): a representation
// part of |f32(w) − w|, and the arithmetic exact (a product by 1).
TEST(QuantizeSplit, F32WeightsRoundAtRest) {
  Fixture f;
  const exec::native::Realization realization = exec::native::uniform_realization(exec::native::RealType::f32);
  const QuantizeSplit split =
      quantize_split(f.program, *f.program.find_function("y"), realization, f.parameters, 1, f.inputs, 128, 1);
  const double expected = std::max(std::fabs(static_cast<float>(0.3) - 0.3), std::fabs(static_cast<float>(0.7) - 0.7));
  EXPECT_EQ(split.representation.absolute, expected);
  EXPECT_EQ(split.arithmetic.absolute, 0);
  EXPECT_EQ(split.weight_bytes, 16);
}

// The first-order predictions on L = Σ_j y_j², y = x · w, x = [1, 2]: g_ij = 2·y_j·x_i, computed
// here by hand, against the exact cotangents' sums for the move to int8 absmax.
TEST(FirstOrder, PredictionsByHand) {
  const char* program_text =
      "const N = 2\n"
      "module M {\n  param w : R[N, N] = zeros\n  fn apply(x : R[1, N]) -> R[1, N] = x · w\n}\n"
      "entry loss(p : M, x : R[1, N]) -> R {\n  let y = p.apply(x)\n  sum(y * y)\n}\n";
  const ir::Program program = lang::testing::compile_text(program_text, lang::testing::options_with({}, {}, "loss"));
  reference::ParameterStore parameters;
  const std::vector<double> w = {0.3, 0.7, 1.0, -0.5};
  parameters.set("w", w);
  const ir::Type type = program.find_function("loss")->argument_types[0];
  const SampleInputs inputs = [type](int64_t) { return std::vector<reference::HostTensor>{{type, {1.0, 2.0}, {}}}; };
  const ParameterGradients gradients =
      exact_parameter_gradients(program, *program.find_function("loss"), parameters, 1, inputs, 128, 1);
  ASSERT_EQ(gradients.samples.size(), 1u);
  const std::vector<double>& g = gradients.samples[0].at("w");
  const double x[2] = {1.0, 2.0}, y[2] = {0.3 + 2 * 1.0, 0.7 + 2 * -0.5};
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) EXPECT_NEAR(g[2 * i + j], 2 * y[j] * x[i], 1e-15) << i << "," << j;
  }
  nlohmann::json json = {{"format", 1}, {"default", "f64"}, {"quant", {{"w", {{"bits", 8}}}}}};
  const exec::native::Realization realization = exec::native::parse_realization(json, "test");
  const reference::ParameterStore stored = stored_parameters(program, realization, parameters);
  const double column_max[2] = {1.0, 0.7};
  double bound = 0, signed_sum = 0, squares = 0;
  for (int e = 0; e < 4; ++e) {
    const double delta = dequantized(w[e], column_max[e % 2]) - w[e];
    EXPECT_EQ((*stored.find("w"))[e], w[e] + delta);
    const double gd = 2 * y[e % 2] * x[e / 2] * delta;
    bound += std::fabs(gd), signed_sum += gd, squares += gd * gd;
  }
  const FirstOrderPrediction p = combine(first_order_sums(gradients, parameters, stored));
  EXPECT_NEAR(p.bound, bound, 1e-12 * bound);
  EXPECT_NEAR(p.signed_sum, signed_sum, 1e-12 * bound);
  EXPECT_NEAR(p.rss, std::sqrt(squares), 1e-12 * bound);
  EXPECT_LT(std::fabs(p.signed_sum), p.bound);  // the moves' signs differ: the signed sum cancels
  EXPECT_GE(p.bound, p.rss);
}

// Given a sink, both sweeps hand each sample's cotangents to it as they are computed and keep
// none: the same samples, in order, bit for bit, as the collected ones (solve --quant streams
// them, so that one sample's are held at a time).
TEST(FirstOrder, StreamedCotangentsAreTheCollectedOnes) {
  const char* program_text =
      "const N = 3\n"
      "module M {\n  param w : R[N, N] = zeros\n  param b : R[N] = zeros\n"
      "  fn apply(x : R[1, N]) -> R[1, N] = x · w + b\n}\n"
      "entry loss(p : M, x : R[1, N]) -> R {\n  let y = p.apply(x)\n  sum(y * y)\n}\n";
  const ir::Program program = lang::testing::compile_text(program_text, lang::testing::options_with({}, {}, "loss"));
  reference::ParameterStore parameters;
  parameters.set("w", {0.3, 0.7, 1.0, -0.5, 0.1, 0.25, -1.5, 2.0, 0.125});
  parameters.set("b", {0.01, -0.2, 0.3});
  const ir::Type type = program.find_function("loss")->argument_types[0];
  const SampleInputs inputs = [type](int64_t k) {
    const double x = 1.0 + static_cast<double>(k);
    return std::vector<reference::HostTensor>{{type, {x, -x / 3, 0.5}, {}}};
  };
  const ir::Function& loss = *program.find_function("loss");
  for (bool binary64 : {false, true}) {
    const ParameterGradients collected = binary64 ? binary64_parameter_gradients(program, loss, parameters, 3, inputs, 1)
                                                  : exact_parameter_gradients(program, loss, parameters, 3, inputs, 128, 1);
    std::vector<std::map<std::string, std::vector<double>>> streamed;
    const GradientSink sink = [&](std::map<std::string, std::vector<double>>&& sample) {
      streamed.push_back(std::move(sample));
    };
    const ParameterGradients kept = binary64 ? binary64_parameter_gradients(program, loss, parameters, 3, inputs, 1, sink)
                                             : exact_parameter_gradients(program, loss, parameters, 3, inputs, 128, 1, sink);
    EXPECT_TRUE(kept.samples.empty()) << binary64;
    ASSERT_EQ(collected.samples.size(), 3u) << binary64;
    EXPECT_EQ(streamed, collected.samples) << binary64;  // == on doubles: bit for bit (none is NaN)
    EXPECT_EQ(collected.samples[0].size(), 2u) << binary64;  // w and b
  }
}

TEST(FirstOrder, RefusesATensorEntry) {
  Fixture f;
  try {
    exact_parameter_gradients(f.program, *f.program.find_function("y"), f.parameters, 1, f.inputs, 128, 1);
    FAIL() << "a tensor entry was accepted";
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), "E1120");
  }
}

}  // namespace
}  // namespace presk::precision
