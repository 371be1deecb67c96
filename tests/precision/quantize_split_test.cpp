// The representation/arithmetic split on a program whose parts are computed by hand: y = x · w
// with x = [1, 0] reads w's first row. Under int8 absmax over −2 the column scales are
// f32(max|w_:j| / 127), each weight f32(q·s) with q = round(w/s); the exact output on the stored
// weights is that row, so the representation part is the row's largest move and, f64 computing
// 1·ŵ + 0·ŵ' exactly, the arithmetic part is 0.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/native/realization.h"
#include "lang/lang_test_util.h"
#include "precision/quantize_split.h"

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

}  // namespace
}  // namespace presk::precision
