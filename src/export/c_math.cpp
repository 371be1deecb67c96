// The transcendentals of the exported C: exec/native/math_impl.h written once more in C99, the
// same sequence of IEEE operations (every fma explicit, every constant the same literal, every
// branch a select computed on both sides), instantiated for double (_d) and float (_f) by
// macros. The native executor's scalar path defines these bits; tests/export compares them.
#include <cstdio>
#include <string>

#include "exec/native/math_scalar.h"
#include "export/c_text.h"

namespace presk::export_c {
namespace {

// Per-type constants and names, as math_impl.h's MathConst.
constexpr const char* kDoubleDefines = R"C(#define PK_T double
#define PK_I int64_t
#define PK_U uint64_t
#define PK_F(name) name##_d
#define PK_FMA fma
#define PK_SQRT sqrt
#define PK_FABS fabs
#define PK_COPYSIGN copysign
#define PK_MANT 52
#define PK_BIAS 1023
#define PK_EXP_DEGREE 13
#define PK_LOG_TERMS 11
#define PK_SHIFTER 0x1.8p52
#define PK_LN2_HI 0x1.62e42fee00000p-1
#define PK_LN2_LO 0x1.a39ef35793c76p-33
#define PK_EXP_HI 710.0
#define PK_EXP_LO (-746.0)
#define PK_EXPM1_LO (-40.0)
#define PK_EXP_SCALE 64
#define PK_EXP_SCALED_LO (-790.0)
#define PK_EXP_UNSCALE 0x1p-64
#define PK_MIN_NORMAL 0x1p-1022
#define PK_SUBNORMAL_SCALE 0x1p54
#define PK_SUBNORMAL_SHIFT 54
#define PK_ONE_MINUS_SQRT_HALF ((int64_t)0x3ff0000000000000LL - (int64_t)0x3fe6a09e667f3bcdLL)
#define PK_SQRT_HALF_BITS ((int64_t)0x3fe6a09e667f3bcdLL)
#define PK_MANTISSA_MASK ((int64_t)0x000fffffffffffffLL)
)C";

constexpr const char* kFloatDefines = R"C(#define PK_T float
#define PK_I int32_t
#define PK_U uint32_t
#define PK_F(name) name##_f
#define PK_FMA fmaf
#define PK_SQRT sqrtf
#define PK_FABS fabsf
#define PK_COPYSIGN copysignf
#define PK_MANT 23
#define PK_BIAS 127
#define PK_EXP_DEGREE 8
#define PK_LOG_TERMS 5
#define PK_SHIFTER 0x1.8p23f
#define PK_LN2_HI 0x1.62e4p-1f
#define PK_LN2_LO 0x1.7f7d1cp-20f
#define PK_EXP_HI 89.0f
#define PK_EXP_LO (-104.0f)
#define PK_EXPM1_LO (-18.0f)
#define PK_EXP_SCALE 32
#define PK_EXP_SCALED_LO (-127.0f)
#define PK_EXP_UNSCALE 0x1p-32f
#define PK_MIN_NORMAL 0x1p-126f
#define PK_SUBNORMAL_SCALE 0x1p24f
#define PK_SUBNORMAL_SHIFT 24
#define PK_ONE_MINUS_SQRT_HALF ((int32_t)0x3f800000 - (int32_t)0x3f3504f3)
#define PK_SQRT_HALF_BITS ((int32_t)0x3f3504f3)
#define PK_MANTISSA_MASK ((int32_t)0x007fffff)
)C";

constexpr const char* kUndefines = R"C(#undef PK_T
#undef PK_I
#undef PK_U
#undef PK_F
#undef PK_FMA
#undef PK_SQRT
#undef PK_FABS
#undef PK_COPYSIGN
#undef PK_MANT
#undef PK_BIAS
#undef PK_EXP_DEGREE
#undef PK_LOG_TERMS
#undef PK_SHIFTER
#undef PK_LN2_HI
#undef PK_LN2_LO
#undef PK_EXP_HI
#undef PK_EXP_LO
#undef PK_EXPM1_LO
#undef PK_EXP_SCALE
#undef PK_EXP_SCALED_LO
#undef PK_EXP_UNSCALE
#undef PK_MIN_NORMAL
#undef PK_SUBNORMAL_SCALE
#undef PK_SUBNORMAL_SHIFT
#undef PK_ONE_MINUS_SQRT_HALF
#undef PK_SQRT_HALF_BITS
#undef PK_MANTISSA_MASK
)C";

// math_impl.h over the macros above (T = PK_T). Integer lanes wrap as a SIMD lane does
// (unsigned arithmetic); the arithmetic shift is spelled without implementation-defined behavior.
constexpr const char* kMathTemplate =
    R"C(PK_INTERNAL PK_I PK_F(pk_bits)(PK_T x) { PK_I i; memcpy(&i, &x, sizeof i); return i; }
PK_INTERNAL PK_T PK_F(pk_from_bits)(PK_I i) { PK_T x; memcpy(&x, &i, sizeof x); return x; }
PK_INTERNAL PK_I PK_F(pk_iadd)(PK_I a, PK_I b) { PK_U u = (PK_U)a + (PK_U)b; PK_I r; memcpy(&r, &u, sizeof r); return r; }
PK_INTERNAL PK_I PK_F(pk_isub)(PK_I a, PK_I b) { PK_U u = (PK_U)a - (PK_U)b; PK_I r; memcpy(&r, &u, sizeof r); return r; }
PK_INTERNAL PK_I PK_F(pk_shl)(PK_I a, int n) { PK_U u = (PK_U)a << n; PK_I r; memcpy(&r, &u, sizeof r); return r; }
PK_INTERNAL PK_I PK_F(pk_sar)(PK_I a, int n) { return a >= 0 ? a >> n : ~(~a >> n); }
PK_INTERNAL int PK_F(pk_isnan)(PK_T x) { return x != x; }

/* Cody-Waite: x = k ln2 + r. */
PK_INTERNAL PK_T PK_F(pk_reduce_ln2)(PK_T x, PK_I* k) {
  const PK_T shifter = PK_SHIFTER;
  PK_T t = x * (PK_T)1.4426950408889634;
  PK_T kf, r;
  t = t + shifter;
  kf = t - shifter;
  *k = PK_F(pk_isub)(PK_F(pk_bits)(t), PK_F(pk_bits)(shifter));
  r = PK_FMA((PK_T)0 - kf, PK_LN2_HI, x);
  return PK_FMA((PK_T)0 - kf, PK_LN2_LO, r);
}
PK_INTERNAL PK_T PK_F(pk_pow2)(PK_I k) { return PK_F(pk_from_bits)(PK_F(pk_shl)(PK_F(pk_iadd)(k, PK_BIAS), PK_MANT)); }
PK_INTERNAL PK_T PK_F(pk_exp_polynomial)(PK_T xc, PK_I* k) {
  PK_T r = PK_F(pk_reduce_ln2)(xc, k);
  PK_T p = PK_F(pk_inverse_factorial)[PK_EXP_DEGREE];
  int n;
  for (n = PK_EXP_DEGREE - 1; n >= 0; --n) p = PK_FMA(p, r, PK_F(pk_inverse_factorial)[n]);
  return p;
}
PK_INTERNAL PK_T PK_F(pk_times_pow2)(PK_T p, PK_I k) {
  PK_I k1 = PK_F(pk_sar)(k, 1);
  return (p * PK_F(pk_pow2)(k1)) * PK_F(pk_pow2)(PK_F(pk_isub)(k, k1));
}
PK_INTERNAL PK_T PK_F(pk_exp)(PK_T x) {
  int under = x < PK_EXP_LO;
  PK_T xc = x > PK_EXP_HI ? PK_EXP_HI : x;
  PK_I k;
  PK_T p, y;
  xc = under ? (PK_T)0 : xc;
  p = PK_F(pk_exp_polynomial)(xc, &k);
  y = PK_F(pk_times_pow2)(p, k);
  y = under ? (PK_T)0 : y;
  return PK_F(pk_isnan)(x) ? x : y;
}
PK_INTERNAL PK_T PK_F(pk_exp_scaled)(PK_T x) {
  int under = x < PK_EXP_SCALED_LO;
  PK_T xc = under ? (PK_T)0 : x;
  PK_I k;
  PK_T p = PK_F(pk_exp_polynomial)(xc, &k);
  PK_T y = PK_F(pk_times_pow2)(p, PK_F(pk_iadd)(k, PK_EXP_SCALE));
  return under ? (PK_T)0 : y;
}
PK_INTERNAL PK_T PK_F(pk_expm1_nonpositive)(PK_T x) {
  PK_T xc = x < PK_EXPM1_LO ? PK_EXPM1_LO : x;
  PK_I k;
  PK_T r = PK_F(pk_reduce_ln2)(xc, &k);
  PK_T p = PK_F(pk_inverse_factorial)[PK_EXP_DEGREE];
  PK_T q, u;
  int n;
  for (n = PK_EXP_DEGREE - 1; n >= 2; --n) p = PK_FMA(p, r, PK_F(pk_inverse_factorial)[n]);
  q = PK_FMA(r * r, p, r);
  u = PK_F(pk_pow2)(k);
  return PK_FMA(u, q, u - (PK_T)1);
}
PK_INTERNAL PK_T PK_F(pk_tanh)(PK_T x) {
  PK_T t = PK_F(pk_expm1_nonpositive)((PK_T)-2 * PK_FABS(x));
  PK_T y = PK_COPYSIGN(((PK_T)0 - t) / (t + (PK_T)2), x);
  return PK_F(pk_isnan)(x) ? x : y;
}
PK_INTERNAL PK_T PK_F(pk_log)(PK_T x) {
  int tiny = x < PK_MIN_NORMAL;
  PK_T xs = tiny ? x * PK_SUBNORMAL_SCALE : x;
  PK_I ix = PK_F(pk_iadd)(PK_F(pk_bits)(xs), PK_ONE_MINUS_SQRT_HALF);
  PK_I e = PK_F(pk_isub)(PK_F(pk_sar)(ix, PK_MANT), PK_BIAS);
  PK_T m = PK_F(pk_from_bits)(PK_F(pk_iadd)(ix & PK_MANTISSA_MASK, PK_SQRT_HALF_BITS));
  PK_T dk = (PK_T)e - (tiny ? (PK_T)PK_SUBNORMAL_SHIFT : (PK_T)0);
  PK_T f = m - (PK_T)1;
  PK_T s = f / ((PK_T)2 + f);
  PK_T z = s * s;
  PK_T r = PK_F(pk_log_coefficient)[PK_LOG_TERMS];
  PK_T hfsq, y;
  int i;
  for (i = PK_LOG_TERMS - 1; i >= 1; --i) r = PK_FMA(r, z, PK_F(pk_log_coefficient)[i]);
  r = r * z;
  hfsq = ((PK_T)0.5 * f) * f;
  y = s * (hfsq + r) + dk * PK_LN2_LO;
  y = ((y - hfsq) + f) + dk * PK_LN2_HI;
  y = x == (PK_T)0 ? -(PK_T)INFINITY : y;
  y = x < (PK_T)0 ? (PK_T)NAN : y;
  y = x == (PK_T)INFINITY ? x : y;
  return PK_F(pk_isnan)(x) ? x : y;
}
PK_INTERNAL PK_T PK_F(pk_gelu_tanh)(PK_T x) {
  PK_T a = (PK_T)0.044715 * (x * x);
  PK_T two_u = PK_FMA(a, x, x) * (PK_T)1.5957691216057308;
  PK_T e = PK_F(pk_exp)((PK_T)0 - PK_FABS(two_u));
  PK_T numerator = two_u < (PK_T)0 ? x * e : x;
  return numerator / ((PK_T)1 + e);
}
PK_INTERNAL PK_T PK_F(pk_rsqrt)(PK_T x) { return (PK_T)1 / (PK_SQRT(x) + (PK_T)0); }
PK_INTERNAL PK_T PK_F(pk_gelu_tanh_grad)(PK_T x) {
  PK_T a = (PK_T)0.044715 * (x * x);
  PK_T two_u = PK_FMA(a, x, x) * (PK_T)1.5957691216057308;
  PK_T e_scaled = PK_F(pk_exp_scaled)((PK_T)0 - PK_FABS(two_u));
  PK_T e = e_scaled * PK_EXP_UNSCALE;
  PK_T s = (PK_T)1 + e;
  PK_T sigma = (two_u < (PK_T)0 ? e : (PK_T)1) / s;
  PK_T q_scaled = e_scaled / (s * s);
  PK_T xc = PK_FABS(x);
  PK_T slope, y;
  xc = xc < (PK_T)64 ? xc : (PK_T)64;
  slope = PK_FMA((PK_T)0.134145, xc * xc, (PK_T)1) * (PK_T)1.5957691216057308;
  y = PK_FMA((x * q_scaled) * slope, PK_EXP_UNSCALE, sigma);
  return PK_F(pk_isnan)(x) ? x : y;
}
/* maxNum and minNum: a NaN operand yields the other one; +0 above -0. */
PK_INTERNAL PK_T PK_F(pk_max)(PK_T a, PK_T b) {
  if (a != a) return b;
  if (b != b) return a;
  if (a > b) return a;
  if (b > a) return b;
  return signbit(a) ? b : a;
}
PK_INTERNAL PK_T PK_F(pk_min)(PK_T a, PK_T b) {
  if (a != a) return b;
  if (b != b) return a;
  if (a < b) return a;
  if (b < a) return b;
  return signbit(a) ? a : b;
}
/* The fold m = x0, then m = x where m is NaN, x > m, or x == m is +0; NaN terms skipped. */
PK_INTERNAL PK_T PK_F(pk_max_fold)(PK_T m, PK_T x) {
  if (m != m || x > m || (x == m && !signbit(x))) m = x != x ? m : x;
  return m;
}
/* Sum of t[0 .. n) in the realization's order: sequential (partials <= 1), or term m into
   partial m mod partials, then the tree p[r] = p[2r] + p[2r+1] (an odd last carried up). */
PK_INTERNAL PK_T PK_F(pk_combine)(PK_T* p, pk_index count) {
  pk_index r;
  if (count == 0) return (PK_T)0;
  while (count > 1) {
    for (r = 0; r + 1 < count; r += 2) p[r / 2] = p[r] + p[r + 1];
    if (count % 2) p[count / 2] = p[count - 1];
    count = (count + 1) / 2;
  }
  return p[0];
}
PK_INTERNAL PK_T PK_F(pk_ordered_sum)(pk_context* cx, const PK_T* t, pk_index n, pk_index partials) {
  PK_T s, *p;
  pk_index m, count;
  if (n == 0) return (PK_T)0;
  if (partials <= 1) {
    s = t[0];
    for (m = 1; m < n; ++m) s = s + t[m];
    return s;
  }
  count = partials < n ? partials : n;
  p = (PK_T*)pk_alloc(cx, (size_t)count * sizeof(PK_T));
  for (m = 0; m < n; ++m) p[m % partials] = m < partials ? t[m] : p[m % partials] + t[m];
  s = PK_F(pk_combine)(p, count);
  pk_free(cx, p);
  return s;
}
)C";

// The binary64-only functions of math_impl.h: erf, gelu_erf and their derivatives.
constexpr const char* kErfFunctions =
    R"C(PK_INTERNAL void pk_erf_series_and_fraction(double ay, double e, double* erf_small, double* erfc_large) {
  const double split = 1.25;
  int small = ay < split;
  double ys = small ? ay : split;
  double t = 2.0 * (ys * ys);
  double acc = 1.0, yc, f;
  int n;
  for (n = 25; n >= 1; --n) acc = fma(acc * t, pk_erf_coefficient[n], 1.0);
  *erf_small = (1.1283791670955126 * e) * (ys * acc);
  yc = small ? split : ay;
  f = yc;
  for (n = 150; n >= 1; --n) f = yc + (0.5 * n) / f;
  *erfc_large = (e * 0.56418958354775629) / f;
}
PK_INTERNAL double pk_erfc_of_gelu(double x, double* gauss) {
  const double split = 1.25;
  double y = x * -0.70710678118654752;
  double ax = fabs(x), ay, xx, hi, lo, e, erf_small = 0, erfc_large = 0, erfc_pos, erfc_neg;
  int small;
  ax = ax < 56.5 ? ax : 56.5;
  ay = ax * 0.70710678118654752;
  xx = ax * ax;
  hi = xx * 0.5;
  lo = fma(ax, ax, 0.0 - xx) * 0.5;
  e = pk_exp_d(0.0 - hi);
  e = fma(0.0 - lo, e, e);
  *gauss = e;
  small = ay < split;
  pk_erf_series_and_fraction(ay, e, &erf_small, &erfc_large);
  erfc_pos = small ? 1.0 - erf_small : erfc_large;
  erfc_neg = small ? 1.0 + erf_small : 2.0 - erfc_large;
  return y < 0 ? erfc_neg : erfc_pos;
}
PK_INTERNAL double pk_gelu_erf_d(double x) {
  double gauss = 0;
  double erfc = pk_erfc_of_gelu(x, &gauss);
  double g = (0.5 * x) * erfc;
  return pk_isnan_d(x) ? x : g;
}
PK_INTERNAL double pk_gelu_erf_grad_d(double x) {
  double gauss = 0;
  double erfc = pk_erfc_of_gelu(x, &gauss);
  double g = fma(x * gauss, 0.3989422804014327, 0.5 * erfc);
  return pk_isnan_d(x) ? x : g;
}
PK_INTERNAL double pk_erf_d(double x) {
  double ax = fabs(x), hi, lo, e, erf_small = 0, erfc_large = 0, magnitude, y;
  ax = ax < 27 ? ax : 27;
  hi = ax * ax;
  lo = fma(ax, ax, 0.0 - hi);
  e = pk_exp_d(0.0 - hi);
  e = fma(0.0 - lo, e, e);
  pk_erf_series_and_fraction(ax, e, &erf_small, &erfc_large);
  magnitude = ax < 1.25 ? erf_small : 1.0 - erfc_large;
  y = x < 0 ? 0.0 - magnitude : magnitude;
  return pk_isnan_d(x) ? x : y;
}
PK_INTERNAL double pk_erf_grad_d(double x) {
  double ax = fabs(x), hi, lo, e, y;
  ax = ax < 28 ? ax : 28;
  hi = ax * ax;
  lo = fma(ax, ax, 0.0 - hi);
  e = pk_exp_d(0.0 - hi);
  e = fma(0.0 - lo, e, e);
  y = 1.1283791670955126 * e;
  return pk_isnan_d(x) ? x : y;
}
/* The binary64 functions in f32: the function of the widened input, rounded once. */
PK_INTERNAL float pk_gelu_erf_f(float x) { return (float)pk_gelu_erf_d((double)x); }
PK_INTERNAL float pk_gelu_erf_grad_f(float x) { return (float)pk_gelu_erf_grad_d((double)x); }
PK_INTERNAL float pk_erf_f(float x) { return (float)pk_erf_d((double)x); }
PK_INTERNAL float pk_erf_grad_f(float x) { return (float)pk_erf_grad_d((double)x); }
)C";

template <typename T>
std::string table(const char* name, int first, int last, T (*value)(int)) {
  std::string text =
      std::string("static const ") + (sizeof(T) == 8 ? "double " : "float ") + name + "[] = {";
  for (int n = 0; n < first; ++n) text += "0, ";
  for (int n = first; n <= last; ++n)
    text += c_real_literal(static_cast<double>(value(n)), sizeof(T) == 4) + (n < last ? ", " : "");
  return text + "};\n";
}

}  // namespace

std::string c_math_functions() {
  using exec::native::scalar_math::inverse_factorial;
  std::string text;
  // The constants math_impl.h computes in C++ (1/n!, 2/(2i+1), 1/(2n+1)), as exact literals.
  text += table<double>("pk_inverse_factorial_d", 0, 16,
                        [](int n) { return inverse_factorial<double>(n); });
  text += table<float>("pk_inverse_factorial_f", 0, 16,
                       [](int n) { return inverse_factorial<float>(n); });
  text += table<double>("pk_log_coefficient_d", 1, 11, [](int i) { return 2.0 / (2 * i + 1); });
  text += table<float>("pk_log_coefficient_f", 1, 5,
                       [](int i) { return static_cast<float>(2.0 / (2 * i + 1)); });
  text += table<double>("pk_erf_coefficient", 1, 25, [](int n) { return 1.0 / (2 * n + 1); });
  text += std::string(kDoubleDefines) + kMathTemplate + kUndefines;
  text += std::string(kFloatDefines) + kMathTemplate + kUndefines;
  text += kErfFunctions;
  return text;
}

}  // namespace presk::export_c
