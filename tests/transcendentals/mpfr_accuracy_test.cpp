// Every transcendental of the native executor (kernels.h's UnaryFn) in every type (f64, f32,
// bf16) against MPFR, on every SIMD target this build compiled that the machine runs
// (Highway's dynamic dispatch, one target at a time through hwy::SetSupportedTargetsForTest):
// 10⁶ inputs per function and type for f64 and f32 (half log-uniform in magnitude from the
// least subnormal to the function's range, half uniform over its core range, plus the special
// and boundary points), every one of the 2¹⁶ bf16 values for bf16. The MPFR values are computed
// once per function and type (at 96 bits for f64, 64 for f32 and bf16, on two threads; the erfc
// in gelu_erf and its derivative by Arb's rigorous erfc) and shared by the targets. Asserted:
// the path under test dispatched to the target asked for, and on AVX2 and better to its FMA
// kernels; its bits equal the scalar definition's; its error stays within the bound that
// docs/semantics.md states (printed per function, type and target). Targets without FMA run the
// scalar definition; they are checked on the first 2¹⁶ inputs, the special points among them.
#include <arb_hypgeom.h>
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "exec/native/kernels.h"
#include "hwy/targets.h"

namespace presk::exec::native {
namespace {

enum class Type { f64, f32, bf16 };
const char* type_name(Type type) {
  return type == Type::f64 ? "f64" : (type == Type::f32 ? "f32" : "bf16");
}

// A binary floating-point format: significand digits, the exponent of the least normal, the
// largest finite value.
struct Format {
  int digits;
  int emin;
  long double max;
};
Format format_of(Type type) {
  if (type == Type::f64) return {53, -1022, std::numeric_limits<double>::max()};
  if (type == Type::f32) return {24, -126, std::numeric_limits<float>::max()};
  return {8, -126, 0x1.fep127L};
}

// Error of y against the exact value r in units of the last place of the format at
// max(|r|, scale); 0 for a NaN wanted and got, or an infinity (or overflow) wanted and got.
double ulp_error(long double y, long double r, long double scale, const Format& f) {
  if (std::isnan(r)) return std::isnan(y) ? 0 : INFINITY;
  if (std::isnan(y)) return INFINITY;
  if (std::isinf(r)) return y == r ? 0 : INFINITY;
  if (std::isinf(y))
    return std::fabs(r) > f.max && std::signbit(y) == std::signbit(r) ? 0 : INFINITY;
  const long double at = std::max(std::fabs(r), std::fabs(scale));
  const int e = at == 0 ? f.emin : std::max(std::ilogb(at), f.emin);
  return static_cast<double>(std::fabs(y - r) / std::ldexp(1.0L, e - (f.digits - 1)));
}

bool is_gelu_grad(UnaryFn fn) {
  return fn == UnaryFn::gelu_tanh_grad || fn == UnaryFn::gelu_erf_grad;
}

// The exact function (MPFR at 96 or 64 bits; the erfc of the gelu_erf family by Arb) of the
// double x: its value and, for the gelu derivatives, the second term x·σ(2u)σ(−2u)·d(2u)/dx
// resp. x·φ(x) that the error is measured against beside |f(x)| (the terms cancel at a root).
class MpfrReference {
 public:
  // `bits`: 96 for f64, 64 for f32 and bf16 (each far beyond the type's 53 or 24).
  explicit MpfrReference(long bits) : bits_(bits) {
    mpfr_inits2(bits, x_, t_, u_, v_, w_, sqrt_2_over_pi_, cubic_, static_cast<mpfr_ptr>(nullptr));
    arb_init(ball_);
    arb_init(scratch_);
    mpfr_const_pi(t_, MPFR_RNDN);
    mpfr_ui_div(t_, 2, t_, MPFR_RNDN);
    mpfr_sqrt(sqrt_2_over_pi_, t_, MPFR_RNDN);
    mpfr_set_str(cubic_, "0.044715", 10, MPFR_RNDN);
  }
  ~MpfrReference() {
    mpfr_clears(x_, t_, u_, v_, w_, sqrt_2_over_pi_, cubic_, static_cast<mpfr_ptr>(nullptr));
    arb_clear(ball_);
    arb_clear(scratch_);
  }
  MpfrReference(const MpfrReference&) = delete;
  MpfrReference& operator=(const MpfrReference&) = delete;

  // {f(x), second term (0 unless a gelu derivative)}.
  std::pair<long double, long double> operator()(UnaryFn fn, double x) {
    mpfr_set_d(x_, x, MPFR_RNDN);
    mpfr_set_zero(w_, 1);
    switch (fn) {
      case UnaryFn::exp:
        mpfr_exp(v_, x_, MPFR_RNDN);
        break;
      case UnaryFn::log:
        mpfr_log(v_, x_, MPFR_RNDN);
        break;
      case UnaryFn::tanh:
        mpfr_tanh(v_, x_, MPFR_RNDN);
        break;
      case UnaryFn::sqrt:
        mpfr_sqrt(v_, x_, MPFR_RNDN);
        break;
      case UnaryFn::rsqrt:  // presk's meaning, the reference's: rsqrt(±0) = +∞ (docs/semantics.md)
        mpfr_sqrt(v_, x_, MPFR_RNDN);
        mpfr_ui_div(v_, 1, v_, MPFR_RNDN);
        if (mpfr_zero_p(x_)) mpfr_set_inf(v_, 1);
        break;
      case UnaryFn::gelu_tanh:  // x·σ(2u): no cancellation in the tail, unlike x/2·(1 + tanh u)
        two_u();
        sigmoid(v_, t_, false);
        mpfr_mul(v_, v_, x_, MPFR_RNDN);
        break;
      case UnaryFn::gelu_erf:  // x/2·erfc(−x/√2)
        erfc_term(v_);
        mpfr_mul(v_, v_, x_, MPFR_RNDN);
        break;
      case UnaryFn::gelu_tanh_grad:  // σ(2u) + x·σ(2u)σ(−2u)·2√(2/π)(1 + 3·0.044715x²)
        two_u();
        sigmoid(v_, t_, false);
        sigmoid(u_, t_, true);
        mpfr_mul(w_, v_, u_, MPFR_RNDN);
        mpfr_sqr(u_, x_, MPFR_RNDN);
        mpfr_mul(u_, u_, cubic_, MPFR_RNDN);
        mpfr_mul_ui(u_, u_, 3, MPFR_RNDN);
        mpfr_add_ui(u_, u_, 1, MPFR_RNDN);
        mpfr_mul(u_, u_, sqrt_2_over_pi_, MPFR_RNDN);
        mpfr_mul_2ui(u_, u_, 1, MPFR_RNDN);
        mpfr_mul(w_, w_, u_, MPFR_RNDN);
        mpfr_mul(w_, w_, x_, MPFR_RNDN);
        mpfr_add(v_, v_, w_, MPFR_RNDN);
        break;
      case UnaryFn::gelu_erf_grad:  // ½erfc(−x/√2) + x·e^(−x²/2)·√(2/π)/2
        erfc_term(v_);
        mpfr_sqr(w_, x_, MPFR_RNDN);
        mpfr_div_2ui(w_, w_, 1, MPFR_RNDN);
        mpfr_neg(w_, w_, MPFR_RNDN);
        mpfr_exp(w_, w_, MPFR_RNDN);
        mpfr_mul(w_, w_, sqrt_2_over_pi_, MPFR_RNDN);
        mpfr_div_2ui(w_, w_, 1, MPFR_RNDN);
        mpfr_mul(w_, w_, x_, MPFR_RNDN);
        mpfr_add(v_, v_, w_, MPFR_RNDN);
        break;
      case UnaryFn::erf:
        mpfr_erf(v_, x_, MPFR_RNDN);
        break;
      case UnaryFn::erf_grad:  // 2/√π · e^(−x²)
        mpfr_sqr(v_, x_, MPFR_RNDN);
        mpfr_neg(v_, v_, MPFR_RNDN);
        mpfr_exp(v_, v_, MPFR_RNDN);
        mpfr_const_pi(t_, MPFR_RNDN);
        mpfr_sqrt(t_, t_, MPFR_RNDN);
        mpfr_div(v_, v_, t_, MPFR_RNDN);
        mpfr_mul_2ui(v_, v_, 1, MPFR_RNDN);
        break;
    }
    return {mpfr_get_ld(v_, MPFR_RNDN), mpfr_get_ld(w_, MPFR_RNDN)};
  }

 private:
  void two_u() {  // t = 2u = 2√(2/π)(x + 0.044715x³)
    mpfr_pow_ui(t_, x_, 3, MPFR_RNDN);
    mpfr_mul(t_, t_, cubic_, MPFR_RNDN);
    mpfr_add(t_, t_, x_, MPFR_RNDN);
    mpfr_mul(t_, t_, sqrt_2_over_pi_, MPFR_RNDN);
    mpfr_mul_2ui(t_, t_, 1, MPFR_RNDN);
  }
  void sigmoid(mpfr_t r, const mpfr_t z, bool negated) {  // σ(±z) = 1/(1 + e^(∓z))
    if (negated)
      mpfr_exp(r, z, MPFR_RNDN);
    else {
      mpfr_neg(r, z, MPFR_RNDN);
      mpfr_exp(r, r, MPFR_RNDN);
    }
    mpfr_add_ui(r, r, 1, MPFR_RNDN);
    mpfr_ui_div(r, 1, r, MPFR_RNDN);
  }
  // ½erfc(−x/√2) by Arb's rigorous erfc (mpfr_erfc takes 20–400 µs at these precisions, Arb's
  // a few): the midpoint of a ball whose radius is checked to be below 2⁻⁸⁰ of it.
  void erfc_term(mpfr_t r) {
    if (mpfr_nan_p(x_)) {
      mpfr_set_nan(r);
      return;
    }
    if (mpfr_cmpabs_ui(x_, 10000) > 0) {  // ½erfc(∓a) is 1 or 0 within e^(−5·10⁷)
      mpfr_set_ui(r, mpfr_sgn(x_) > 0 ? 1 : 0, MPFR_RNDN);
      return;
    }
    for (long precision = bits_ + 32;; precision *= 2) {  // more bits until the ball is tight
      arb_set_d(ball_, mpfr_get_d(x_, MPFR_RNDN));        // exact: x is a double
      arb_sqrt_ui(scratch_, 2, precision);
      arb_div(ball_, ball_, scratch_, precision);
      arb_neg(ball_, ball_);
      arb_hypgeom_erfc(ball_, ball_, precision);
      arb_mul_2exp_si(ball_, ball_, -1);
      if (arb_is_zero(ball_) || arb_rel_accuracy_bits(ball_) > bits_ + 8 || precision > 4096) break;
    }
    EXPECT_TRUE(arb_is_zero(ball_) || arb_rel_accuracy_bits(ball_) > bits_ + 8)
        << "erfc(" << mpfr_get_d(x_, MPFR_RNDN) << ")";
    arf_get_mpfr(r, arb_midref(ball_), MPFR_RNDN);
  }

  long bits_;
  mpfr_t x_, t_, u_, v_, w_, sqrt_2_over_pi_, cubic_;
  arb_t ball_, scratch_;
};

// The magnitude beyond which a function's result is settled (saturated, overflowed, or
// underflowed to ±0 in the type) and the core range sampled uniformly.
struct Range {
  double hi;  // log-uniform magnitudes up to hi
  double core_lo, core_hi;
  bool positive;  // the domain is x ≥ 0 (negative inputs come from the special points)
};
Range range_of(UnaryFn fn, Type type) {
  const bool f64 = type == Type::f64;
  switch (fn) {
    case UnaryFn::exp:
      return f64 ? Range{750, -745, 709.7, false} : Range{110, -104, 88.7, false};
    case UnaryFn::log:
    case UnaryFn::rsqrt:
    case UnaryFn::sqrt:
      return {f64 ? 1.7e308 : 3.4e38, 0, 20, true};
    case UnaryFn::tanh:
      return {40, -20, 20, false};
    case UnaryFn::gelu_tanh:  // f64: the core reaches the tail's end (results underflow near −21.5)
    case UnaryFn::gelu_tanh_grad:
      return {f64 ? 40.0 : 30.0, f64 ? -24.0 : -12.0, 12, false};
    case UnaryFn::gelu_erf:
    case UnaryFn::gelu_erf_grad:
      return {60, -12, 12, false};
    case UnaryFn::erf:
    case UnaryFn::erf_grad:
      return {40, -8, 8, false};
  }
  return {};
}

// The special and boundary points of a type: ±0, ±∞, NaN, the subnormal and normal edges, the
// largest finite value, and the functions' own edges (exp's clamps and overflow thresholds,
// log's reduction interval, tanh's saturation, gelu_erf's switch at a = 1.25, its clamp,
// gelu_tanh_grad's slope clamp), each with its neighbours.
template <typename T>
std::vector<T> special_points() {
  using L = std::numeric_limits<T>;
  const T edges[] = {T(0),
                     L::denorm_min(),
                     L::min() - L::denorm_min(),
                     L::min(),
                     T(1),
                     T(0.5),
                     T(2),
                     T(0.70710678118654752),
                     T(1.4142135623730950),
                     T(0.69314718055994531),
                     T(1.7677669529663688),
                     T(56.5),
                     T(64),
                     T(27),  // erf's clamp; erf_grad's e^{−x²} is subnormal from 26.6 and 0 from 27.3
                     T(27.3),
                     T(28),  // erf_grad's clamp
                     T(30),
                     T(746),
                     T(745.13321910194122),
                     T(709.78271289338397),
                     T(710),
                     T(104),
                     T(103.97208),
                     T(88.722839),
                     T(89),
                     T(9.0109133),
                     T(19.061547),
                     L::max()};
  std::vector<T> points = {L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN()};
  for (T edge : edges) {
    for (T x : {std::nextafter(edge, T(0)), edge, std::nextafter(edge, L::infinity())}) {
      points.push_back(x);
      points.push_back(-x);
    }
  }
  return points;
}

// The inputs of a function in a type (values of the type, held in T).
template <typename T>
std::vector<T> inputs_for(UnaryFn fn, Type type) {
  if (type == Type::bf16) {  // every bf16 value
    std::vector<T> xs(1u << 16);
    for (uint32_t i = 0; i < xs.size(); ++i) xs[i] = std::bit_cast<float>(i << 16);
    return xs;
  }
  constexpr size_t kCount = 1'000'000;
  const Range range = range_of(fn, type);
  std::vector<T> xs = special_points<T>();
  std::mt19937_64 rng(1000 + static_cast<int>(fn) * 3 + static_cast<int>(type));
  std::uniform_real_distribution<double> log2_magnitude(
      std::log2(static_cast<double>(std::numeric_limits<T>::denorm_min())), std::log2(range.hi));
  std::uniform_real_distribution<double> core(range.core_lo, range.core_hi);
  std::bernoulli_distribution negative(range.positive ? 0.0 : 0.5);
  while (xs.size() < kCount) {
    if (xs.size() % 2 == 0) {
      const T magnitude = static_cast<T>(std::exp2(log2_magnitude(rng)));
      xs.push_back(negative(rng) ? -magnitude : magnitude);
    } else {
      xs.push_back(static_cast<T>(core(rng)));
    }
  }
  return xs;
}

// The MPFR value and scale of every input, on two threads.
std::vector<std::pair<long double, long double>> reference_values(UnaryFn fn, Type type,
                                                                  const std::vector<double>& xs) {
  std::vector<std::pair<long double, long double>> values(xs.size());
  auto work = [&](size_t begin, size_t end) {
    MpfrReference exact(type == Type::f64 ? 96 : 64);
    for (size_t i = begin; i < end; ++i) values[i] = exact(fn, xs[i]);
  };
  std::thread second(work, xs.size() / 2, xs.size());
  work(0, xs.size() / 2);
  second.join();
  return values;
}

// Stated bounds (docs/semantics.md, "Transcendentals"): the max ulp error over the inputs.
// bf16: the f32 result rounded once more, ½ ulp of bf16 plus the f32 error (2⁻¹⁶ bf16 ulps
// per f32 ulp).
double bound(UnaryFn fn, Type type) {
  const bool f64 = type == Type::f64;
  double f32_bound = 0;
  switch (fn) {
    case UnaryFn::exp:
      f32_bound = 1.0;
      break;
    case UnaryFn::log:
      f32_bound = 1.0;
      break;
    case UnaryFn::tanh:
      f32_bound = 3.0;
      break;
    // the tail's condition number (≈ 2.5·|2u| ulps down to where the result underflows: f64
    // 2u ≈ −708 at x ≈ −21.5, f32 2u ≈ −87 at x ≈ −10.5)
    case UnaryFn::gelu_tanh:
      f32_bound = f64 ? 2048.0 : 256.0;
      break;
    case UnaryFn::gelu_erf:
      f32_bound = f64 ? 64.0 : 1.0;
      break;  // 1 − erf(a) just below a = 1.25
    case UnaryFn::rsqrt:
      f32_bound = 1.5;
      break;
    case UnaryFn::sqrt:
      f32_bound = 0.5;
      break;
    // in ulps of max(|f|, |second term|): gelu_tanh's tail, Φ's digits lost below a = 1.25
    case UnaryFn::gelu_tanh_grad:
      f32_bound = f64 ? 2048.0 : 256.0;
      break;
    case UnaryFn::gelu_erf_grad:
      f32_bound = f64 ? 32.0 : 1.0;
      break;
    case UnaryFn::erf:  // docs/semantics.md: erf 8 / 1, erf_grad 4 / 1
      f32_bound = f64 ? 8.0 : 1.0;
      break;
    case UnaryFn::erf_grad:
      f32_bound = f64 ? 4.0 : 1.0;
      break;
  }
  return type == Type::bf16 ? 0.5 + f32_bound * 0x1p-16 : f32_bound;
}

template <typename T>
void run(UnaryFn fn, Type type, const T* x, T* y, size_t n, bool force_scalar) {
  if constexpr (sizeof(T) == 8) {
    unary_f64(fn, x, y, n, force_scalar);
  } else if (type == Type::f32) {
    unary_f32(fn, x, y, n, force_scalar);
  } else {
    unary_bf16(fn, x, y, n, force_scalar);
  }
}

// The targets this build compiled that this machine runs, best first (AVX-512, AVX2, SSE4, …).
std::vector<int64_t> targets() {
  std::vector<int64_t> list = hwy::SupportedAndGeneratedTargets();
  EXPECT_FALSE(list.empty());
  return list;
}

bool is_fma_target(int64_t target) {
#if HWY_ARCH_X86
  return target <= HWY_AVX2;  // Highway numbers better targets lower: AVX2, AVX3, AVX3_DL, …
#else
  (void)target;
  return false;
#endif
}

template <typename T>
void check(UnaryFn fn, Type type) {
  const std::vector<T> xs = inputs_for<T>(fn, type);
  const size_t n = xs.size();
  const auto exact = reference_values(fn, type, std::vector<double>(xs.begin(), xs.end()));
  std::vector<T> scalar(n), simd(n);
  run<T>(fn, type, xs.data(), scalar.data(), n, true);
  const Format format = format_of(type);
  for (int64_t target : targets()) {
    hwy::SetSupportedTargetsForTest(target);
    const SimdPath path = sizeof(T) == 8 ? simd_path_f64() : simd_path_f32();
    EXPECT_EQ(path.target, target) << hwy::TargetName(target);
    EXPECT_EQ(path.fma, is_fma_target(target)) << hwy::TargetName(target);
    // A target without FMA runs the scalar definition itself: the first 2¹⁶ inputs (the special
    // points among them) show that it does.
    const size_t checked = is_fma_target(target) ? n : std::min<size_t>(n, 1u << 16);
    run<T>(fn, type, xs.data(), simd.data(), checked, false);
    double worst = 0;
    T worst_x = 0;
    size_t differ = 0;
    for (size_t i = 0; i < checked; ++i) {
      differ += std::memcmp(&simd[i], &scalar[i], sizeof(T)) != 0;
      const double e =
          ulp_error(simd[i], exact[i].first, is_gelu_grad(fn) ? exact[i].second : 0, format);
      if (e > worst || std::isnan(e)) worst = e, worst_x = xs[i];
    }
    std::printf("%-14s %-4s %-8s max error %8.3f ulp at %.9g over %zu inputs (bound %g)\n",
                unary_fn_name(fn), type_name(type), hwy::TargetName(target), worst,
                static_cast<double>(worst_x), checked, bound(fn, type));
    EXPECT_EQ(differ, 0u) << unary_fn_name(fn) << " " << type_name(type) << " "
                          << hwy::TargetName(target)
                          << ": SIMD bits other than the scalar definition's";
    EXPECT_LE(worst, bound(fn, type)) << unary_fn_name(fn) << " " << type_name(type) << " "
                                      << hwy::TargetName(target) << " at x = " << worst_x;
  }
  hwy::SetSupportedTargetsForTest(0);
}

const UnaryFn kFns[] = {
    UnaryFn::exp,          UnaryFn::log,   UnaryFn::tanh, UnaryFn::gelu_tanh,
    UnaryFn::gelu_erf,     UnaryFn::rsqrt, UnaryFn::sqrt, UnaryFn::gelu_tanh_grad,
    UnaryFn::gelu_erf_grad, UnaryFn::erf,  UnaryFn::erf_grad};

class AgainstMpfr : public ::testing::TestWithParam<UnaryFn> {};

TEST_P(AgainstMpfr, F64) {
  check<double>(GetParam(), Type::f64);
}
TEST_P(AgainstMpfr, F32) {
  check<float>(GetParam(), Type::f32);
}
TEST_P(AgainstMpfr, Bf16EveryValue) {
  check<float>(GetParam(), Type::bf16);
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, AgainstMpfr, ::testing::ValuesIn(kFns),
                         [](const ::testing::TestParamInfo<UnaryFn>& info) {
                           return std::string(unary_fn_name(info.param));
                         });

// On a machine with AVX2, the targets under test include AVX2 (even where AVX-512 is the best)
// and the SIMD path of each type then runs the FMA kernels; without SetSupportedTargetsForTest
// the dispatch picks the best target.
TEST(TranscendentalDispatch, SimdPathsDispatchToFmaTargets) {
#if HWY_ARCH_X86
  if ((hwy::SupportedTargets() & HWY_AVX2) == 0) GTEST_SKIP() << "this machine has no AVX2";
  const std::vector<int64_t> list = targets();
  EXPECT_NE(std::find(list.begin(), list.end(), HWY_AVX2), list.end())
      << "AVX2 is not among the compiled targets";
  for (int64_t target : list) {
    if (!is_fma_target(target)) continue;
    hwy::SetSupportedTargetsForTest(target);
    for (SimdPath path : {simd_path_f64(), simd_path_f32()}) {
      EXPECT_EQ(path.target, target);
      EXPECT_TRUE(path.fma) << hwy::TargetName(target);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_EQ(simd_path_f32().target, list.front());
  EXPECT_TRUE(simd_path_f32().fma);
#else
  GTEST_SKIP() << "FMA targets are checked on x86";
#endif
}

}  // namespace
}  // namespace presk::exec::native
