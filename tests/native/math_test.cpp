// presk's transcendentals: SIMD bits equal the scalar definition, and the error against a
// high-precision reference (long double for 10⁶ inputs per function and type, MPFR at 256
// bits on a sample) stays within the bound stated in docs/semantics.md.
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

// Error of y against the exact value r in units of the last place of T at r.
template <typename T>
double ulp_error(T y, long double r) {
  if (std::isnan(r)) return std::isnan(y) ? 0 : INFINITY;
  if (std::isinf(r)) return y == r ? 0 : INFINITY;
  constexpr int p = std::numeric_limits<T>::digits;
  constexpr int emin = std::numeric_limits<T>::min_exponent - 1;  // exponent of the least normal
  int e = r == 0 ? emin : std::max(std::ilogb(r), emin);
  long double ulp = std::ldexp(1.0L, e - (p - 1));
  if (std::isinf(y)) return std::fabs(r) > std::numeric_limits<T>::max() ? 0 : INFINITY;
  return static_cast<double>(std::fabs(static_cast<long double>(y) - r) / ulp);
}

long double reference(UnaryFn fn, long double x) {
  switch (fn) {
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
  if (fn == UnaryFn::gelu_tanh || fn == UnaryFn::gelu_erf) lo = -12, hi = 12;
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
  }
  return 0;
}

const UnaryFn kFns[] = {UnaryFn::exp, UnaryFn::log, UnaryFn::tanh, UnaryFn::gelu_tanh,
                        UnaryFn::gelu_erf, UnaryFn::rsqrt, UnaryFn::sqrt};

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
    double e = ulp_error<T>(scalar[i], reference(fn, xs[i]));
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

}  // namespace
}  // namespace presk::exec::native
