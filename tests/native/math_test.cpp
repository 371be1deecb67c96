// presk's transcendentals: SIMD bits equal the scalar definition, and the error against a
// high-precision reference (long double for 10⁶ inputs per function and type, MPFR at 256
// bits on a sample) stays within the bound stated in docs/semantics.md. The gelu derivatives
// are measured in ulps of max(|f(x)|, |second term|) (their two terms cancel at a root).
#include <gtest/gtest.h>
#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "exec/native/kernels.h"

namespace presk::exec::native {
namespace {

// Error of y against the exact value r in units of the last place of T at max(|r|, scale).
template <typename T>
double ulp_error(T y, long double r, long double scale = 0) {
  if (std::isnan(r)) return std::isnan(y) ? 0 : INFINITY;
  if (std::isinf(r)) return y == r ? 0 : INFINITY;
  constexpr int p = std::numeric_limits<T>::digits;
  constexpr int emin = std::numeric_limits<T>::min_exponent - 1;  // exponent of the least normal
  const long double at = std::max(std::fabs(r), std::fabs(scale));
  int e = at == 0 ? emin : std::max(std::ilogb(at), emin);
  long double ulp = std::ldexp(1.0L, e - (p - 1));
  if (std::isinf(y)) return std::fabs(r) > std::numeric_limits<T>::max() ? 0 : INFINITY;
  return static_cast<double>(std::fabs(static_cast<long double>(y) - r) / ulp);
}

constexpr long double kSqrt2OverPi = 0.797884560802865355879892119868763737L;

// The gelu derivatives' two terms: Φ-like (first) and the x·density term (second).
// gelu_tanh_grad: σ(2u) + x·σ(2u)σ(−2u)·d(2u)/dx; gelu_erf_grad: Φ(x) + x·φ(x).
std::pair<long double, long double> gelu_grad_terms(UnaryFn fn, long double x) {
  if (fn == UnaryFn::gelu_erf_grad) {
    return {erfcl(-x / sqrtl(2.0L)) / 2, x * expl(-x * x / 2) * kSqrt2OverPi / 2};
  }
  const long double two_u = 2 * kSqrt2OverPi * (x + 0.044715L * x * x * x);
  const long double e = expl(-fabsl(two_u)), sigma = (two_u < 0 ? e : 1.0L) / (1 + e);
  return {sigma, x * e / ((1 + e) * (1 + e)) * 2 * kSqrt2OverPi * (1 + 0.134145L * x * x)};
}

// The scale an error is measured against beyond |f(x)|: the gelu derivatives' second term.
long double error_scale(UnaryFn fn, long double x) {
  if (fn != UnaryFn::gelu_tanh_grad && fn != UnaryFn::gelu_erf_grad) return 0;
  return std::isfinite(x) ? gelu_grad_terms(fn, x).second : 0;
}

long double reference(UnaryFn fn, long double x) {
  switch (fn) {
    case UnaryFn::gelu_tanh_grad:
    case UnaryFn::gelu_erf_grad: {
      auto [first, second] = gelu_grad_terms(fn, x);
      return first + second;
    }
    case UnaryFn::exp: return expl(x);
    case UnaryFn::log: return logl(x);
    case UnaryFn::tanh: return tanhl(x);
    case UnaryFn::gelu_tanh: {
      long double u = sqrtl(2.0L / 3.14159265358979323846264338327950288L) * (x + 0.044715L * x * x * x);
      return x / (1.0L + expl(-2.0L * u));
    }
    case UnaryFn::gelu_erf: return x / 2 * erfcl(-x / sqrtl(2.0L));
    case UnaryFn::rsqrt: return 1.0L / sqrtl(x);
    case UnaryFn::sqrt: return sqrtl(x);
    case UnaryFn::erf: return erfl(x);
    case UnaryFn::erf_grad: return 2 / sqrtl(3.14159265358979323846264338327950288L) * expl(-x * x);
  }
  return 0;
}

// Inputs: uniform over the function's interesting range and random bit patterns.
template <typename T>
std::vector<T> inputs_for(UnaryFn fn, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  double lo = -20, hi = 20;
  if (fn == UnaryFn::exp) lo = sizeof(T) == 8 ? -745 : -104, hi = sizeof(T) == 8 ? 709.7 : 88.7;
  if (fn == UnaryFn::gelu_tanh || fn == UnaryFn::gelu_erf || fn == UnaryFn::gelu_tanh_grad ||
      fn == UnaryFn::gelu_erf_grad) {
    lo = -12, hi = 12;
  }
  if (fn == UnaryFn::erf || fn == UnaryFn::erf_grad) lo = -7, hi = 7;
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<T> xs(count);
  for (size_t i = 0; i < count; ++i) {
    if (i % 2 == 0) {
      xs[i] = static_cast<T>(uniform(rng));
    } else {
      xs[i] = std::bit_cast<T>(static_cast<Bits>(rng()));
      if (fn == UnaryFn::log || fn == UnaryFn::rsqrt || fn == UnaryFn::sqrt) xs[i] = std::fabs(xs[i]);
      if (!std::isfinite(xs[i]) || (fn != UnaryFn::log && fn != UnaryFn::rsqrt && fn != UnaryFn::sqrt &&
                                    std::fabs(xs[i]) > hi)) {
        xs[i] = static_cast<T>(uniform(rng));
      }
    }
  }
  return xs;
}

// Stated bounds (docs/semantics.md): max ulp error over the tested inputs.
double bound(UnaryFn fn, bool f64) {
  switch (fn) {
    case UnaryFn::exp: return f64 ? 1.0 : 1.0;
    case UnaryFn::log: return 1.0;
    case UnaryFn::tanh: return f64 ? 3.0 : 3.0;
    case UnaryFn::gelu_tanh: return f64 ? 400.0 : 256.0;  // the tail's condition number
    case UnaryFn::gelu_erf: return f64 ? 64.0 : 1.0;  // 1 − erf(a) just below a = 1.25
    case UnaryFn::rsqrt: return 1.5;
    case UnaryFn::sqrt: return 0.5;
    // in ulps of max(|f|, |second term|): gelu_tanh's tail, Φ's digits lost below a = 1.25
    case UnaryFn::gelu_tanh_grad: return f64 ? 512.0 : 256.0;
    case UnaryFn::gelu_erf_grad: return f64 ? 32.0 : 1.0;
    case UnaryFn::erf: return f64 ? 8.0 : 1.0;  // the series just below a = 1.25
    case UnaryFn::erf_grad: return f64 ? 4.0 : 1.0;
  }
  return 0;
}

const UnaryFn kFns[] = {UnaryFn::exp,   UnaryFn::log,  UnaryFn::tanh,           UnaryFn::gelu_tanh,    UnaryFn::gelu_erf,
                        UnaryFn::rsqrt, UnaryFn::sqrt, UnaryFn::gelu_tanh_grad, UnaryFn::gelu_erf_grad,
                        UnaryFn::erf,   UnaryFn::erf_grad};

template <typename T>
void check_function(UnaryFn fn, size_t count) {
  std::vector<T> xs = inputs_for<T>(fn, count, 42 + static_cast<int>(fn));
  std::vector<T> simd(count), scalar(count);
  if constexpr (sizeof(T) == 8) {
    unary_f64(fn, xs.data(), simd.data(), count, false);
    unary_f64(fn, xs.data(), scalar.data(), count, true);
  } else {
    unary_f32(fn, xs.data(), simd.data(), count, false);
    unary_f32(fn, xs.data(), scalar.data(), count, true);
  }
  double worst = 0;
  T worst_x = 0;
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(std::memcmp(&simd[i], &scalar[i], sizeof(T)), 0)
        << unary_fn_name(fn) << "(" << xs[i] << "): simd " << simd[i] << " scalar " << scalar[i];
    double e = ulp_error<T>(scalar[i], reference(fn, xs[i]), error_scale(fn, xs[i]));
    if (e > worst) worst = e, worst_x = xs[i];
  }
  std::printf("%-10s %s max error %.3f ulp at %.9g over %zu inputs\n", unary_fn_name(fn),
              sizeof(T) == 8 ? "f64" : "f32", worst, static_cast<double>(worst_x), count);
  EXPECT_LE(worst, bound(fn, sizeof(T) == 8)) << unary_fn_name(fn) << " at " << worst_x;
}

TEST(Transcendentals, F64MillionInputsAgainstLongDouble) {
  for (UnaryFn fn : kFns) check_function<double>(fn, 1'000'000);
}

TEST(Transcendentals, F32MillionInputsAgainstLongDouble) {
  for (UnaryFn fn : kFns) check_function<float>(fn, 1'000'000);
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

// Cross-check against MPFR at 256 bits on a sample (independent of libm's long double).
TEST(Transcendentals, MpfrCrossCheck) {
  mpfr_t x, y;
  mpfr_inits2(256, x, y, static_cast<mpfr_ptr>(nullptr));
  for (UnaryFn fn : {UnaryFn::exp, UnaryFn::log, UnaryFn::tanh}) {
    std::vector<double> xs = inputs_for<double>(fn, 20000, 7);
    double worst = 0;
    for (double v : xs) {
      mpfr_set_d(x, v, MPFR_RNDN);
      if (fn == UnaryFn::exp) mpfr_exp(y, x, MPFR_RNDN);
      if (fn == UnaryFn::log) mpfr_log(y, x, MPFR_RNDN);
      if (fn == UnaryFn::tanh) mpfr_tanh(y, x, MPFR_RNDN);
      worst = std::max(worst, ulp_error<double>(unary_scalar(fn, v), mpfr_get_ld(y, MPFR_RNDN)));
    }
    EXPECT_LE(worst, bound(fn, true)) << unary_fn_name(fn);
  }
  mpfr_clears(x, y, static_cast<mpfr_ptr>(nullptr));
}

// The gelu derivatives by the reference's formulas (src/exec/reference/ops_elementwise.cpp) in
// MPFR at 256 bits, measured as above (ulps of max(|f|, |second term|)):
//   gelu_tanh_grad = ½(1 + t) + ½x(1 − t²)·√(2/π)(1 + 3·0.044715x²), t = tanh(√(2/π)(x + 0.044715x³));
//   gelu_erf_grad  = ½(1 + erf(x/√2)) + ½x·e^(−x²/2)·√(2/π).
// first and second receive the two terms.
void gelu_grad_mpfr(UnaryFn fn, mpfr_t x, mpfr_t first, mpfr_t second, mpfr_t scratch) {
  mpfr_t c;
  mpfr_init2(c, 256);
  mpfr_const_pi(c, MPFR_RNDN);
  mpfr_ui_div(c, 2, c, MPFR_RNDN);
  mpfr_sqrt(c, c, MPFR_RNDN);  // √(2/π)
  if (fn == UnaryFn::gelu_tanh_grad) {
    mpfr_sqr(scratch, x, MPFR_RNDN);
    mpfr_set_str(first, "0.044715", 10, MPFR_RNDN);
    mpfr_mul(scratch, scratch, first, MPFR_RNDN);  // 0.044715x²
    mpfr_mul_ui(second, scratch, 3, MPFR_RNDN);
    mpfr_add_ui(second, second, 1, MPFR_RNDN);
    mpfr_mul(second, second, c, MPFR_RNDN);        // √(2/π)(1 + 3·0.044715x²)
    mpfr_fma(first, scratch, x, x, MPFR_RNDN);
    mpfr_mul(first, first, c, MPFR_RNDN);
    mpfr_tanh(first, first, MPFR_RNDN);            // t
    mpfr_sqr(scratch, first, MPFR_RNDN);
    mpfr_ui_sub(scratch, 1, scratch, MPFR_RNDN);
    mpfr_mul(second, second, scratch, MPFR_RNDN);
    mpfr_add_ui(first, first, 1, MPFR_RNDN);
  } else {
    mpfr_sqrt_ui(scratch, 2, MPFR_RNDN);
    mpfr_div(first, x, scratch, MPFR_RNDN);
    mpfr_erf(first, first, MPFR_RNDN);
    mpfr_add_ui(first, first, 1, MPFR_RNDN);       // 1 + erf(x/√2)
    mpfr_sqr(second, x, MPFR_RNDN);
    mpfr_div_2ui(second, second, 1, MPFR_RNDN);
    mpfr_neg(second, second, MPFR_RNDN);
    mpfr_exp(second, second, MPFR_RNDN);
    mpfr_mul(second, second, c, MPFR_RNDN);        // e^(−x²/2)·√(2/π)
  }
  mpfr_mul(second, second, x, MPFR_RNDN);
  mpfr_div_2ui(second, second, 1, MPFR_RNDN);
  mpfr_div_2ui(first, first, 1, MPFR_RNDN);
  mpfr_clear(c);
}

TEST(Transcendentals, GeluDerivativesAgainstMpfr) {
  mpfr_t x, first, second, scratch;
  mpfr_inits2(256, x, first, second, scratch, static_cast<mpfr_ptr>(nullptr));
  for (UnaryFn fn : {UnaryFn::gelu_tanh_grad, UnaryFn::gelu_erf_grad}) {
    double worst = 0;
    for (double v : inputs_for<double>(fn, 20000, 9)) {
      mpfr_set_d(x, v, MPFR_RNDN);
      gelu_grad_mpfr(fn, x, first, second, scratch);
      const long double scale = mpfr_get_ld(second, MPFR_RNDN);
      mpfr_add(first, first, second, MPFR_RNDN);
      worst = std::max(worst, ulp_error<double>(unary_scalar(fn, v), mpfr_get_ld(first, MPFR_RNDN), scale));
    }
    std::printf("%-14s f64 max error %.3f ulp against MPFR over 20000 inputs\n", unary_fn_name(fn), worst);
    EXPECT_LE(worst, bound(fn, true)) << unary_fn_name(fn);
  }
  mpfr_clears(x, first, second, scratch, static_cast<mpfr_ptr>(nullptr));
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
