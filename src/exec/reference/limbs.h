// Limb arithmetic shared by the MPFR kernels (exact_fma.cpp, exact_dot.cpp, fixed_dot.cpp,
// fixed_exp.cpp; the functions in limbs.cpp): MPFR's significands are GMP limbs, least
// significant first.
#pragma once

#include <mpfr.h>

#include <cstdint>

#include <x86intrin.h>

namespace presk::reference::limbs {

using Limb = uint64_t;
__extension__ typedef unsigned __int128 Wide;
constexpr int kLimbBits = 64;

// p = x·w, LX + LW limbs (schoolbook).
template <int LX, int LW>
inline void product(const Limb* x, const Limb* w, Limb* p) {
  for (int i = 0; i < LX + LW; ++i) p[i] = 0;
  for (int i = 0; i < LX; ++i) {
    Limb carry = 0;
    for (int j = 0; j < LW; ++j) {
      Wide t = static_cast<Wide>(x[i]) * w[j] + p[i + j] + carry;
      p[i + j] = static_cast<Limb>(t);
      carry = static_cast<Limb>(t >> kLimbBits);
    }
    p[i + LW] = carry;
  }
}

// p = a·b, 2N limbs.
template <int N>
inline void multiply(const Limb* a, const Limb* b, Limb* p) {
  product<N, N>(a, b, p);
}

// out = a + b + carry_in; returns the carry out (the x86 add-with-carry instruction).
inline unsigned char add_carry(unsigned char carry, Limb a, Limb b, Limb* out) {
  unsigned long long sum = 0;
  carry = _addcarry_u64(carry, a, b, &sum);
  *out = sum;
  return carry;
}

// out = a − b − borrow_in; returns the borrow out.
inline unsigned char sub_borrow(unsigned char borrow, Limb a, Limb b, Limb* out) {
  unsigned long long difference = 0;
  borrow = _subborrow_u64(borrow, a, b, &difference);
  *out = difference;
  return borrow;
}

// The bits of `high` that a right shift by s ∈ [0, 64) moves into the limb below (0 for s = 0).
inline Limb spill(Limb high, int s) { return (high << 1) << (kLimbBits - 1 - s); }

// The helpers of the fixed-point windows (exact_dot.cpp, fixed_dot.cpp, fixed_exp.cpp), limbs
// least significant first. The bits [lo, lo + 64) of w as one limb; bits outside [0, 64·size)
// are 0.
inline Limb bits_at(const Limb* w, int size, int64_t lo) {
  const int64_t q = lo >= 0 ? lo / kLimbBits : -((-lo + kLimbBits - 1) / kLimbBits);
  const auto s = static_cast<int>(lo - q * kLimbBits);
  auto limb = [&](int64_t i) { return i >= 0 && i < size ? w[i] : Limb{0}; };
  return (limb(q) >> s) | spill(limb(q + 1), s);
}

// Whether any of w's bits [0, end) is set (end ≤ 64·size).
inline bool any_below(const Limb* w, int64_t end) {
  if (end <= 0) return false;
  const int64_t q = end / kLimbBits;
  const auto s = static_cast<int>(end % kLimbBits);
  for (int64_t i = 0; i < q; ++i) {
    if (w[i] != 0) return true;
  }
  return s != 0 && (w[q] & ((Limb{1} << s) - 1)) != 0;
}

// w ← w − v over `size` limbs (two's complement).
inline void subtract(Limb* w, const Limb* v, int size) {
  unsigned char c = 0;
  for (int j = 0; j < size; ++j) c = sub_borrow(c, w[j], v[j], &w[j]);
}
// r ← ∘(w · 2^lsb) to nearest, ties to even, w a two's complement window of `size` limbs (it is
// negated in place when negative); r has precision `bits` of n limbs and the result's exponent
// is known to fit MPFR's range.
void round_window(Limb* w, int size, int64_t lsb, long bits, int n, __mpfr_struct* r);
// MPFR's exponent range. presk never changes it (there is no mpfr_set_emin or mpfr_set_emax in
// src/), so every thread has MPFR's default, and the fast paths test their results against
// these constants: mpfr_get_emin reads a thread-local of libmpfr, a call and a TLS lookup each
// time (two_limbs_test.cpp checks the constants against it).
constexpr int64_t kExponentMin = MPFR_EMIN_DEFAULT, kExponentMax = MPFR_EMAX_DEFAULT;

// r ← the 256-bit window high:low (its top bit at 255) · 2^(e − 256) with sign, rounded to
// nearest (ties to even) at r's precision p ≤ 128, `sticky`: a nonzero part below the window.
// False (r untouched) when the result leaves MPFR's exponent range.
[[gnu::always_inline]] inline bool round_window256(mpfr_ptr r, Wide high, Wide low, bool sticky, int64_t e,
                                                   int sign) {
  const int sh = static_cast<int>(128 - mpfr_get_prec(r));  // the unused low bits of high
  const Wide ulp = static_cast<Wide>(1) << sh;
  const bool round_bit = sh > 0 ? ((high >> (sh - 1)) & 1) != 0 : (low >> 127) != 0;
  const bool rest = sticky || (sh > 0 ? (high & ((ulp >> 1) - 1)) != 0 || low != 0 : (low << 1) != 0);
  high &= ~(ulp - 1);
  if (round_bit && (rest || (high & ulp) != 0)) {
    high += ulp;
    if (high == 0) high = static_cast<Wide>(1) << 127, ++e;  // 0.11…1 rounded up: 0.10…0 · 2¹
  }
  if (e < kExponentMin || e > kExponentMax) return false;
  if (sh >= kLimbBits) {  // one limb
    r->_mpfr_d[0] = static_cast<Limb>(high >> 64);
  } else {
    r->_mpfr_d[0] = static_cast<Limb>(high), r->_mpfr_d[1] = static_cast<Limb>(high >> 64);
  }
  r->_mpfr_sign = sign;
  r->_mpfr_exp = static_cast<mpfr_exp_t>(e);
  return true;
}

// Whether the bits [lo, hi) of w are all `ones` (true for an empty range).
bool all_bits(const Limb* w, int64_t lo, int64_t hi, bool ones);

// a ← −a, N limbs (two's complement).
template <int N>
inline void negate(Limb* a) {
  Limb negated[N] = {};
  subtract(negated, a, N);
  for (int i = 0; i < N; ++i) a[i] = negated[i];
}

// r ← the two's complement window a (size limbs, bit 0 weighing 2^lsb) rounded to nearest at
// `bits`, when that is the rounding of every real within 2^eb units of it (eb < 0: a is exact;
// `cut`: it may not be, so a zero window decides nothing); false (r untouched) when it is not,
// when a lies within the bound of a midpoint or a binade's end, or when the result could be
// near MPFR's exponent limits [emin, emax]. a is negated in place when negative.
bool round_decided(Limb* a, int size, int64_t lsb, int64_t eb, bool cut, long bits, int64_t emin,
                   int64_t emax, __mpfr_struct* r);

}  // namespace presk::reference::limbs
