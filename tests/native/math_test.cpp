// presk's transcendentals on special values and at exp's clamp. Their accuracy against MPFR
// on every SIMD target, 10⁶ inputs per function and type, is tests/transcendentals/.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "exec/native/kernels.h"

namespace presk::exec::native {
namespace {

const UnaryFn kFns[] = {UnaryFn::exp,   UnaryFn::log,  UnaryFn::tanh,           UnaryFn::gelu_tanh,    UnaryFn::gelu_erf,
                        UnaryFn::rsqrt, UnaryFn::sqrt, UnaryFn::gelu_tanh_grad, UnaryFn::gelu_erf_grad,
                        UnaryFn::erf,   UnaryFn::erf_grad};

// rsqrt(−0) = +∞ in every type, scalar and SIMD, as the reference (docs/semantics.md): the
// real 1/√x, whose zero has no sign; 1/√−0 in IEEE arithmetic would be −∞.
TEST(Transcendentals, RsqrtOfMinusZeroIsPlusInfinity) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(unary_scalar(UnaryFn::rsqrt, -0.0), inf);
  EXPECT_EQ(unary_scalar(UnaryFn::rsqrt, -0.0f), static_cast<float>(inf));
  for (bool scalar : {true, false}) {
    std::vector<double> x64(19, 4.0), y64(19);
    std::vector<float> x32(19, 4.0f), y32(19), y16(19);
    x64[0] = x64[17] = -0.0;
    x32[0] = x32[17] = -0.0f;
    unary_f64(UnaryFn::rsqrt, x64.data(), y64.data(), x64.size(), scalar);
    unary_f32(UnaryFn::rsqrt, x32.data(), y32.data(), x32.size(), scalar);
    unary_bf16(UnaryFn::rsqrt, x32.data(), y16.data(), x32.size(), scalar);
    for (size_t i : {size_t{0}, size_t{17}}) {
      EXPECT_EQ(y64[i], inf) << "f64, scalar " << scalar << ", element " << i;
      EXPECT_EQ(y32[i], static_cast<float>(inf)) << "f32, scalar " << scalar << ", element " << i;
      EXPECT_EQ(y16[i], static_cast<float>(inf)) << "bf16, scalar " << scalar << ", element " << i;
    }
    EXPECT_EQ(y64[1], 0.5);
    EXPECT_EQ(y32[1], 0.5f);
  }
}

// Specials: ±0, ±Inf, NaN, subnormals, overflow and underflow edges.
TEST(Transcendentals, Specials) {
  for (UnaryFn fn : kFns) {  // NaN in, NaN out, on both paths
    double x[5] = {NAN, -NAN, 1, 2, 3}, y[5];
    float xf[5] = {NAN, -NAN, 1, 2, 3}, yf[5];
    unary_f64(fn, x, y, 5, false);
    unary_f32(fn, xf, yf, 5, false);
    EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]) && std::isnan(yf[0]) && std::isnan(yf[1])) << unary_fn_name(fn);
  }
  const double inf = INFINITY;
  EXPECT_EQ(unary_scalar(UnaryFn::exp, inf), inf);
  EXPECT_EQ(unary_scalar(UnaryFn::exp, -inf), 0.0);
  EXPECT_EQ(unary_scalar(UnaryFn::exp, 0.0), 1.0);
  EXPECT_EQ(unary_scalar(UnaryFn::exp, 710.0), inf);
  EXPECT_EQ(unary_scalar(UnaryFn::exp, -745.0), 0x1p-1074);
  EXPECT_TRUE(std::isnan(unary_scalar(UnaryFn::exp, NAN)));
  EXPECT_EQ(unary_scalar(UnaryFn::log, 0.0), -inf);
  EXPECT_EQ(unary_scalar(UnaryFn::log, 1.0), 0.0);
  EXPECT_EQ(unary_scalar(UnaryFn::log, inf), inf);
  EXPECT_TRUE(std::isnan(unary_scalar(UnaryFn::log, -1.0)));
  EXPECT_EQ(unary_scalar(UnaryFn::log, 0x1p-1074), -1074 * std::log(2.0));
  EXPECT_EQ(unary_scalar(UnaryFn::tanh, inf), 1.0);
  EXPECT_EQ(unary_scalar(UnaryFn::tanh, -inf), -1.0);
  EXPECT_TRUE(std::signbit(unary_scalar(UnaryFn::tanh, -0.0)));
  EXPECT_EQ(unary_scalar(UnaryFn::gelu_erf, inf), inf);
  EXPECT_TRUE(std::isnan(unary_scalar(UnaryFn::gelu_erf, -inf)));  // −∞·0, as the formula
  EXPECT_EQ(unary_scalar(UnaryFn::gelu_tanh, inf), inf);
  EXPECT_EQ(unary_scalar(UnaryFn::rsqrt, 0.0), inf);
  for (UnaryFn fn : {UnaryFn::gelu_tanh_grad, UnaryFn::gelu_erf_grad}) {  // ∞·0 = NaN, as the formulas
    EXPECT_TRUE(std::isnan(unary_scalar(fn, inf)) && std::isnan(unary_scalar(fn, -inf))) << unary_fn_name(fn);
    EXPECT_TRUE(std::isnan(unary_scalar(fn, INFINITY)) && std::isnan(unary_scalar(fn, -INFINITY))) << unary_fn_name(fn);
    EXPECT_EQ(unary_scalar(fn, 0.0), 0.5);
    EXPECT_EQ(unary_scalar(fn, 0.0f), 0.5f);
    EXPECT_EQ(unary_scalar(fn, 1e300), 1.0);
    EXPECT_EQ(unary_scalar(fn, -1e300), 0.0);
    EXPECT_EQ(unary_scalar(fn, 3e38f), 1.0f);
    EXPECT_EQ(unary_scalar(fn, -3e38f), 0.0f);
  }
  EXPECT_EQ(unary_scalar(UnaryFn::exp, 89.0f), INFINITY);
  EXPECT_EQ(unary_scalar(UnaryFn::exp, -103.5f), 0x1p-149f);
  EXPECT_EQ(unary_scalar(UnaryFn::log, 0x1p-149f), static_cast<float>(-149 * std::log(2.0)));
}

}  // namespace
}  // namespace presk::exec::native

namespace presk::exec::native {
namespace {

// exp below its lower clamp (f32 −104, f64 −746) is +0 without computing: what the clamped
// formula gives at the clamp itself, on every path; just above it, the subnormal results still
// come from the formula, the same on the scalar and SIMD paths.
TEST(Transcendentals, ExpBelowTheClampIsTheClampedFormulasZero) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {-104.0f, -104.5f, -1e30f, -inf}) {
    EXPECT_EQ(std::bit_cast<uint32_t>(unary_scalar(UnaryFn::exp, x)), 0u) << x;
  }
  for (double x : {-746.0, -746.5, -1e300, -std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(std::bit_cast<uint64_t>(unary_scalar(UnaryFn::exp, x)), 0u) << x;
  }
  std::vector<float> xs;
  for (float x = -104.5f; x < -86.0f; x += 0.01f) xs.push_back(x);
  xs.push_back(-inf);
  std::vector<float> simd(xs.size());
  unary_f32(UnaryFn::exp, xs.data(), simd.data(), xs.size(), false);
  size_t subnormal = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(simd[i]), std::bit_cast<uint32_t>(unary_scalar(UnaryFn::exp, xs[i]))) << xs[i];
    subnormal += std::fpclassify(simd[i]) == FP_SUBNORMAL;
  }
  EXPECT_GT(subnormal, 1000u);
}

}  // namespace
}  // namespace presk::exec::native
