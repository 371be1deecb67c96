// presk's transcendentals, written once over an "ops" policy M so that the scalar path
// (M = ScalarOps<T>, which defines the bits) and every SIMD target (M = a Highway policy)
// run the identical sequence of IEEE operations: every fma explicit, every constant the same
// double/float literal, every branch a select. No include guard on purpose: the scalar file
// includes it once and the Highway files once per target, inside that target's namespace.
//
// Policy M provides: T (double|float), V, VI (same-width signed int), Mask; set, add, sub, mul,
// div, fma(a,b,c)=a*b+c rounded once, sqrt, lt, gt, eq, is_nan, select(mask, yes, no), bits,
// from_bits, iset, iadd, isub, iand, shl<n>, sar<n>, to_real (exact for small integers),
// abs, copysign(magnitude, sign). Definitions and measured errors: docs/semantics.md.

// Per-type constants of the algorithms.
template <typename T> struct MathConst;
template <> struct MathConst<double> {
  static constexpr int kMantissa = 52, kBias = 1023, kExpDegree = 13, kLogTerms = 11;
  static constexpr double kShifter = 0x1.8p52;  // adding it rounds to an integer, ties to even
  static constexpr double kLn2Hi = 0x1.62e42fee00000p-1, kLn2Lo = 0x1.a39ef35793c76p-33;
  static constexpr double kExpHi = 710.0, kExpLo = -746.0, kExpm1Lo = -40.0;
  static constexpr int kExpScale = 64;
  static constexpr double kExpScaledLo = -790.0, kExpUnscale = 0x1p-64;  // −790 < −746 − 64·ln2
  static constexpr double kMinNormal = 0x1p-1022, kSubnormalScale = 0x1p54;
  static constexpr int kSubnormalShift = 54;
  static constexpr int64_t kOneMinusSqrtHalf = 0x3ff0000000000000LL - 0x3fe6a09e667f3bcdLL;
  static constexpr int64_t kSqrtHalfBits = 0x3fe6a09e667f3bcdLL;
  static constexpr int64_t kMantissaMask = 0x000fffffffffffffLL;
};
template <> struct MathConst<float> {
  static constexpr int kMantissa = 23, kBias = 127, kExpDegree = 8, kLogTerms = 5;
  static constexpr float kShifter = 0x1.8p23f;
  static constexpr float kLn2Hi = 0x1.62e4p-1f, kLn2Lo = 0x1.7f7d1cp-20f;  // hi: 15 bits, k·hi exact
  static constexpr float kExpHi = 89.0f, kExpLo = -104.0f, kExpm1Lo = -18.0f;
  static constexpr int kExpScale = 32;
  static constexpr float kExpScaledLo = -127.0f, kExpUnscale = 0x1p-32f;  // −127 < −104 − 32·ln2
  static constexpr float kMinNormal = 0x1p-126f, kSubnormalScale = 0x1p24f;
  static constexpr int kSubnormalShift = 24;
  static constexpr int32_t kOneMinusSqrtHalf = 0x3f800000 - 0x3f3504f3;
  static constexpr int32_t kSqrtHalfBits = 0x3f3504f3;
  static constexpr int32_t kMantissaMask = 0x007fffff;
};

// 1/n! rounded to T (n = 0 … 16).
template <typename T>
constexpr T inverse_factorial(int n) {
  double value = 1.0;
  for (int i = 2; i <= n; ++i) value /= i;  // exact enough: rounded once more to T below
  return static_cast<T>(value);
}

// Cody–Waite reduction: x = k·ln2 + r, |r| <= ln2/2; returns r and the integer k (as VI).
template <class M>
inline typename M::V reduce_ln2(typename M::V x, typename M::VI& k) {
  using C = MathConst<typename M::T>;
  using V = typename M::V;
  const V shifter = M::set(C::kShifter);
  V t = M::add(M::mul(x, M::set(static_cast<typename M::T>(1.4426950408889634))), shifter);
  V kf = M::sub(t, shifter);
  k = M::isub(M::bits(t), M::bits(shifter));
  V r = M::fma(M::sub(M::set(0), kf), M::set(C::kLn2Hi), x);
  return M::fma(M::sub(M::set(0), kf), M::set(C::kLn2Lo), r);
}

// 2^k for k in the normal exponent range.
template <class M>
inline typename M::V pow2_of(typename M::VI k) {
  using C = MathConst<typename M::T>;
  return M::from_bits(M::template shl<C::kMantissa>(M::iadd(k, M::iset(C::kBias))));
}

// exp(xc) = p·2^k: the Cody–Waite reduction and the Taylor polynomial of degree kExpDegree on
// r (Horner, fma); returns p and k.
template <class M>
inline typename M::V exp_polynomial(typename M::V xc, typename M::VI& k) {
  using C = MathConst<typename M::T>;
  using V = typename M::V;
  V r = reduce_ln2<M>(xc, k);
  V p = M::set(inverse_factorial<typename M::T>(C::kExpDegree));
  for (int n = C::kExpDegree - 1; n >= 0; --n) p = M::fma(p, r, M::set(inverse_factorial<typename M::T>(n)));
  return p;
}

// p·2^k in two exact halves, so that a subnormal result is rounded once.
template <class M>
inline typename M::V times_pow2(typename M::V p, typename M::VI k) {
  typename M::VI k1 = M::template sar<1>(k);
  return M::mul(M::mul(p, pow2_of<M>(k1)), pow2_of<M>(M::isub(k, k1)));
}

// exp: x clamped to [kExpLo, kExpHi], then p·2^k. Below kExpLo the clamped formula gives +0
// (exp(kExpLo)·(1 ± ε) is under half the least subnormal; math_test checks it), so those lanes
// take +0 directly and compute from 0 meanwhile: the same bits, without the microcode assist an
// underflowing multiply costs (softmax's masked −∞ entries).
template <class M>
inline typename M::V exp_impl(typename M::V x) {
  using C = MathConst<typename M::T>;
  using V = typename M::V;
  const auto under = M::lt(x, M::set(C::kExpLo));
  V xc = M::select(M::gt(x, M::set(C::kExpHi)), M::set(C::kExpHi), x);
  xc = M::select(under, M::set(0), xc);
  typename M::VI k;
  V p = exp_polynomial<M>(xc, k);
  V y = M::select(under, M::set(0), times_pow2<M>(p, k));
  return M::select(M::is_nan(x), x, y);
}

// exp(x)·2^kExpScale for x <= 0, scaled so that it stays normal down to exp's own underflow
// (p·2^(k + kExpScale), the same p and k as exp); +0 below kExpScaledLo, where exp(x)·2^S is
// under the least subnormal. exp(x) = exp_scaled(x)·2^−S, rounded once (the same value).
template <class M>
inline typename M::V exp_scaled_impl(typename M::V x) {
  using C = MathConst<typename M::T>;
  using V = typename M::V;
  auto under = M::lt(x, M::set(C::kExpScaledLo));
  V xc = M::select(under, M::set(0), x);  // selected away below: computed from 0, no underflow
  typename M::VI k;
  V p = exp_polynomial<M>(xc, k);
  V y = times_pow2<M>(p, M::iadd(k, M::iset(C::kExpScale)));
  return M::select(under, M::set(0), y);
}

// expm1 for x <= 0 (tanh's helper): 2^k·q + (2^k − 1) with q = expm1(r), one rounding.
template <class M>
inline typename M::V expm1_nonpositive(typename M::V x) {
  using C = MathConst<typename M::T>;
  using V = typename M::V;
  V xc = M::select(M::lt(x, M::set(C::kExpm1Lo)), M::set(C::kExpm1Lo), x);
  typename M::VI k;
  V r = reduce_ln2<M>(xc, k);
  V p = M::set(inverse_factorial<typename M::T>(C::kExpDegree));
  for (int n = C::kExpDegree - 1; n >= 2; --n) p = M::fma(p, r, M::set(inverse_factorial<typename M::T>(n)));
  V q = M::fma(M::mul(r, r), p, r);
  V u = pow2_of<M>(k);
  return M::fma(u, q, M::sub(u, M::set(1)));
}

// tanh(x) = sign(x) · (−t / (t + 2)), t = expm1(−2|x|).
template <class M>
inline typename M::V tanh_impl(typename M::V x) {
  using V = typename M::V;
  V t = expm1_nonpositive<M>(M::mul(M::set(-2), M::abs(x)));
  V y = M::copysign(M::div(M::sub(M::set(0), t), M::add(t, M::set(2))), x);
  return M::select(M::is_nan(x), x, y);
}

// log: x = 2^e·m, m in [√½, √2); f = m − 1, s = f/(2+f), z = s²;
// log(x) = e·ln2_hi + (f − (hf² − s·(hf² + R(z)) − e·ln2_lo)), R(z) = Σ_{i>=1} 2/(2i+1)·zⁱ (fdlibm's form).
template <class M>
inline typename M::V log_impl(typename M::V x) {
  using T = typename M::T;
  using C = MathConst<T>;
  using V = typename M::V;
  auto tiny = M::lt(x, M::set(C::kMinNormal));
  V xs = M::select(tiny, M::mul(x, M::set(C::kSubnormalScale)), x);
  typename M::VI ix = M::iadd(M::bits(xs), M::iset(C::kOneMinusSqrtHalf));
  typename M::VI e = M::isub(M::template sar<C::kMantissa>(ix), M::iset(C::kBias));
  V m = M::from_bits(M::iadd(M::iand(ix, M::iset(C::kMantissaMask)), M::iset(C::kSqrtHalfBits)));
  V dk = M::sub(M::to_real(e), M::select(tiny, M::set(static_cast<T>(C::kSubnormalShift)), M::set(0)));
  V f = M::sub(m, M::set(1));
  V s = M::div(f, M::add(M::set(2), f));
  V z = M::mul(s, s);
  V r = M::set(static_cast<T>(2.0 / (2 * C::kLogTerms + 1)));
  for (int i = C::kLogTerms - 1; i >= 1; --i) r = M::fma(r, z, M::set(static_cast<T>(2.0 / (2 * i + 1))));
  r = M::mul(r, z);
  V hfsq = M::mul(M::mul(M::set(static_cast<T>(0.5)), f), f);
  V y = M::add(M::mul(s, M::add(hfsq, r)), M::mul(dk, M::set(C::kLn2Lo)));
  y = M::add(M::add(M::sub(y, hfsq), f), M::mul(dk, M::set(C::kLn2Hi)));
  const T inf = std::numeric_limits<T>::infinity();
  y = M::select(M::eq(x, M::set(0)), M::set(-inf), y);
  y = M::select(M::lt(x, M::set(0)), M::set(std::numeric_limits<T>::quiet_NaN()), y);
  y = M::select(M::eq(x, M::set(inf)), x, y);
  return M::select(M::is_nan(x), x, y);
}

// gelu_tanh(x) = x/2·(1 + tanh(u)) = x·σ(2u), 2u = 2√(2/π)·(x + 0.044715·x³), with
// e = exp(−|2u|): x / (1 + e) where 2u >= 0, (x·e) / (1 + e) where 2u < 0 (no overflow).
template <class M>
inline typename M::V gelu_tanh_impl(typename M::V x) {
  using T = typename M::T;
  using V = typename M::V;
  V a = M::mul(M::set(static_cast<T>(0.044715)), M::mul(x, x));
  V two_u = M::mul(M::fma(a, x, x), M::set(static_cast<T>(1.5957691216057308)));
  V e = exp_impl<M>(M::sub(M::set(0), M::abs(two_u)));
  V numerator = M::select(M::lt(two_u, M::set(0)), M::mul(x, e), x);
  return M::div(numerator, M::add(M::set(1), e));
}

// rsqrt(x) = 1 / sqrt(x): two correctly rounded steps. rsqrt(±0) = +∞, as the reference's
// (MPFR's rec_sqrt): √−0 = −0, and adding +0 makes it +0 (x + 0 = x for every other x).
template <class M>
inline typename M::V rsqrt_impl(typename M::V x) {
  return M::div(M::set(1), M::add(M::sqrt(x), M::set(0)));
}

// gelu_tanh_grad(x) = d/dx x·σ(2u) = σ(2u) + x·σ(2u)·σ(−2u)·d(2u)/dx with 2u as in gelu_tanh,
// d(2u)/dx = 1.5957691216057308·(1 + 0.134145·x²), and with e = exp(−|2u|): σ(2u) = 1/(1+e)
// where 2u >= 0, e/(1+e) where 2u < 0; σ(2u)·σ(−2u) = e/(1+e)². The second term is computed
// from e·2^S (exp_scaled: never subnormal) and scaled back by the final fma, so it keeps its
// precision where e is subnormal. The slope uses min(|x|, 64) (e > 0 needs |x| < 30): a huge
// finite x gives 1 or +0, x = ±∞ gives ∞·0 = NaN, as the formula ½(1 + t) + ½x(1 − t²)·√(2/π)·
// (1 + 3·0.044715x²) does.
template <class M>
inline typename M::V gelu_tanh_grad_impl(typename M::V x) {
  using T = typename M::T;
  using C = MathConst<T>;
  using V = typename M::V;
  V a = M::mul(M::set(static_cast<T>(0.044715)), M::mul(x, x));
  V two_u = M::mul(M::fma(a, x, x), M::set(static_cast<T>(1.5957691216057308)));
  V e_scaled = exp_scaled_impl<M>(M::sub(M::set(0), M::abs(two_u)));
  V e = M::mul(e_scaled, M::set(C::kExpUnscale));
  V s = M::add(M::set(1), e);
  V sigma = M::div(M::select(M::lt(two_u, M::set(0)), e, M::set(1)), s);
  V q_scaled = M::div(e_scaled, M::mul(s, s));
  V xc = M::abs(x);
  xc = M::select(M::lt(xc, M::set(64)), xc, M::set(64));  // also maps NaN (selected away)
  V slope = M::mul(M::fma(M::set(static_cast<T>(0.134145)), M::mul(xc, xc), M::set(1)),
                   M::set(static_cast<T>(1.5957691216057308)));
  V y = M::fma(M::mul(M::mul(x, q_scaled), slope), M::set(C::kExpUnscale), sigma);
  return M::select(M::is_nan(x), x, y);
}

// For a >= 0 and e = e^{−a²}: erf(a) by the series (used where a < 1.25) and erfc(a) by the
// continued fraction (used where a >= 1.25), both defined in the formulas below.
template <class M>
inline void erf_series_and_fraction(typename M::V ay, typename M::V e, typename M::V& erf_small,
                                    typename M::V& erfc_large) {
  using V = typename M::V;
  const V split = M::set(1.25);
  auto small = M::lt(ay, split);
  V ys = M::select(small, ay, split);
  V t = M::mul(M::set(2), M::mul(ys, ys));
  V acc = M::set(1);
  for (int n = 25; n >= 1; --n) acc = M::fma(M::mul(acc, t), M::set(1.0 / (2 * n + 1)), M::set(1));
  erf_small = M::mul(M::mul(M::set(1.1283791670955126), e), M::mul(ys, acc));
  V yc = M::select(small, split, ay);
  V f = yc;
  for (int n = 150; n >= 1; --n) f = M::add(yc, M::div(M::set(0.5 * n), f));
  erfc_large = M::div(M::mul(e, M::set(0.56418958354775629)), f);
}

// erfc(−x/√2) and e^{−x²/2} in binary64 (gelu_erf's and gelu_erf_grad's common part), for
// a = min(|x|, 56.5)/√2:
//   a < 1.25:  erf(a) = 2/√π·e^{−a²}·Σ_{n<26} 2ⁿa^{2n+1}/(2n+1)!!  (positive terms, no cancellation)
//   a >= 1.25: erfc(a) = e^{−a²}/√π / (a + ½/(a + 1/(a + 3/2/(…)))), 150 levels from the bottom
//   erfc(y) = 1 − erf(a) or erfc(a) for y = −x/√2 >= 0; 1 + erf(a) or 2 − erfc(a) for y < 0.
// e^{−a²} uses a² = x²/2 = hi + lo (fma) and e^{−hi}·(1 − lo).
template <class M>
inline typename M::V erfc_of_gelu(typename M::V x, typename M::V& gauss) {
  using V = typename M::V;
  static_assert(std::is_same_v<typename M::T, double>, "gelu_erf is defined in binary64");
  const V split = M::set(1.25);
  V y = M::mul(x, M::set(-0.70710678118654752));
  V ax = M::abs(x);
  ax = M::select(M::lt(ax, M::set(56.5)), ax, M::set(56.5));  // also maps NaN (selected away)
  V ay = M::mul(ax, M::set(0.70710678118654752));
  V xx = M::mul(ax, ax);
  V hi = M::mul(xx, M::set(0.5));  // a² = x²/2 = hi + lo, exactly but for underflow
  V lo = M::mul(M::fma(ax, ax, M::sub(M::set(0), xx)), M::set(0.5));
  V e = exp_impl<M>(M::sub(M::set(0), hi));
  e = M::fma(M::sub(M::set(0), lo), e, e);
  gauss = e;
  auto small = M::lt(ay, split);
  V erf_small = M::set(0), erfc_large = M::set(0);
  erf_series_and_fraction<M>(ay, e, erf_small, erfc_large);
  V erfc_pos = M::select(small, M::sub(M::set(1), erf_small), erfc_large);
  V erfc_neg = M::select(small, M::add(M::set(1), erf_small), M::sub(M::set(2), erfc_large));
  return M::select(M::lt(y, M::set(0)), erfc_neg, erfc_pos);
}

// gelu_erf in binary64: gelu(x) = x/2 · erfc(−x/√2).
template <class M>
inline typename M::V gelu_erf_impl(typename M::V x) {
  using V = typename M::V;
  V gauss = M::set(0);
  V erfc = erfc_of_gelu<M>(x, gauss);
  V g = M::mul(M::mul(M::set(0.5), x), erfc);  // x = −∞: −∞·0 = NaN, as the formula says
  return M::select(M::is_nan(x), x, g);
}

// gelu_erf_grad in binary64: Φ(x) + x·φ(x) = ½·erfc(−x/√2) + x·e^{−x²/2}·(1/√(2π)), the
// second term one fma. x = ±∞: ∞·0 = NaN, as the formula says.
template <class M>
inline typename M::V gelu_erf_grad_impl(typename M::V x) {
  using V = typename M::V;
  V gauss = M::set(0);
  V erfc = erfc_of_gelu<M>(x, gauss);
  V g = M::fma(M::mul(x, gauss), M::set(0.3989422804014327), M::mul(M::set(0.5), erfc));
  return M::select(M::is_nan(x), x, g);
}

// erf in binary64, a = min(|x|, 27) (erf is 1 in binary64 beyond 6): the series of
// erf_series_and_fraction for a < 1.25, 1 − erfc(a) above; the sign of x restored (odd).
// e^{−a²} uses a² = hi + lo (fma) and e^{−hi}·(1 − lo).
template <class M>
inline typename M::V erf_impl(typename M::V x) {
  using V = typename M::V;
  static_assert(std::is_same_v<typename M::T, double>, "erf is defined in binary64");
  V ax = M::abs(x);
  ax = M::select(M::lt(ax, M::set(27)), ax, M::set(27));  // also maps NaN (selected away)
  V hi = M::mul(ax, ax);
  V lo = M::fma(ax, ax, M::sub(M::set(0), hi));
  V e = exp_impl<M>(M::sub(M::set(0), hi));
  e = M::fma(M::sub(M::set(0), lo), e, e);
  V erf_small = M::set(0), erfc_large = M::set(0);
  erf_series_and_fraction<M>(ax, e, erf_small, erfc_large);
  V magnitude = M::select(M::lt(ax, M::set(1.25)), erf_small, M::sub(M::set(1), erfc_large));
  V y = M::select(M::lt(x, M::set(0)), M::sub(M::set(0), magnitude), magnitude);
  return M::select(M::is_nan(x), x, y);
}

// erf_grad in binary64: 2/√π · e^{−x²}, e^{−x²} as in erf_impl, but |x| clamped at 28, where
// e^{−784} underflows to +0 (at 27, erf's clamp, e^{−729} is still a subnormal: ±∞ gave 2.8e−317).
template <class M>
inline typename M::V erf_grad_impl(typename M::V x) {
  using V = typename M::V;
  V ax = M::abs(x);
  ax = M::select(M::lt(ax, M::set(28)), ax, M::set(28));
  V hi = M::mul(ax, ax);
  V lo = M::fma(ax, ax, M::sub(M::set(0), hi));
  V e = exp_impl<M>(M::sub(M::set(0), hi));
  e = M::fma(M::sub(M::set(0), lo), e, e);
  V y = M::mul(M::set(1.1283791670955126), e);
  return M::select(M::is_nan(x), x, y);
}
