// The limb helpers of limbs.h: the fixed-point windows' bits, their rounding, and the rounding of
// a window known only within a bound (Ziv's test on integers).
#include "exec/reference/limbs.h"

#include <algorithm>

namespace presk::reference::limbs {
namespace {

// Whether every real within 2^eb (eb ≥ 0) of the magnitude a (top bit t) rounds to nearest at
// `bits` as a does, and a lies on no tie: the bits between the bound and the rounding bit say
// so. eb < 0: a is exact (nothing to decide).
bool decided(const Limb* a, int64_t t, int64_t eb, long bits) {
  if (eb < 0) return true;
  int64_t kept = t - bits + 1;  // the lowest bit kept
  if (eb + 3 > kept) return false;
  if (all_bits(a, eb, t, false) || all_bits(a, eb, t, true)) return false;  // near a binade's end
  bool round_bit = ((a[(kept - 1) / kLimbBits] >> ((kept - 1) % kLimbBits)) & 1) != 0;
  return !all_bits(a, eb, kept - 1, !round_bit);  // else within the bound of a midpoint
}

// w (a two's complement window of `size` limbs) ← |w|, `negative` whether it was negative; its
// top nonzero limb (−1 for zero).
int magnitude_in_place(Limb* w, int size, bool* negative) {
  *negative = (w[size - 1] >> (kLimbBits - 1)) != 0;
  if (*negative) {
    unsigned char c = 1;
    for (int j = 0; j < size; ++j) c = add_carry(c, ~w[j], 0, &w[j]);
  }
  int t = size - 1;
  while (t >= 0 && w[t] == 0) --t;
  return t;
}

}  // namespace

// Whether the bits [lo, hi) of w are all `ones` (true for an empty range).
bool all_bits(const Limb* w, int64_t lo, int64_t hi, bool ones) {
  for (int64_t b = lo; b < hi;) {
    int64_t q = b / kLimbBits;
    int s = static_cast<int>(b % kLimbBits);
    int n = static_cast<int>(std::min<int64_t>(kLimbBits - s, hi - b));
    Limb mask = (n == kLimbBits ? ~Limb{0} : ((Limb{1} << n) - 1)) << s;
    Limb bits = w[q] & mask;
    if (bits != (ones ? mask : 0)) return false;
    b += n;
  }
  return true;
}

// r ← ∘(w · 2^lsb), w a two's complement window of `size` limbs (it is negated in place when
// negative); r has precision `bits` of N limbs and the result's exponent is known to fit.
void round_window(Limb* w, int size, int64_t lsb, long bits, int n, __mpfr_struct* r) {
  bool negative = false;
  const int t = magnitude_in_place(w, size, &negative);
  if (t < 0) {
    mpfr_set_zero(r, 1);
    return;
  }
  int64_t top = int64_t{t} * kLimbBits + (kLimbBits - 1 - __builtin_clzll(w[t]));  // its top bit
  int64_t lo = top - int64_t{n} * kLimbBits + 1;  // bit 0 of the significand's lowest limb
  Limb* mant = r->_mpfr_d;
  for (int i = 0; i < n; ++i) mant[i] = bits_at(w, size, lo + int64_t{i} * kLimbBits);
  int sh = n * kLimbBits - static_cast<int>(bits);  // unused low bits of mant[0]
  Limb round_bit = 0;
  bool sticky = false;
  if (sh > 0) {
    round_bit = (mant[0] >> (sh - 1)) & 1;
    sticky = (mant[0] & ((Limb{1} << (sh - 1)) - 1)) != 0 || any_below(w, lo);
  } else {
    round_bit = bits_at(w, size, lo - 1) & 1;
    sticky = any_below(w, lo - 1);
  }
  Limb ulp = Limb{1} << sh;
  mant[0] &= ~(ulp - 1);
  Limb carry = round_bit & static_cast<Limb>(sticky || (mant[0] & ulp) != 0);
  carry *= ulp;
  for (int j = 0; j < n; ++j) {
    mant[j] += carry;
    carry = static_cast<Limb>(mant[j] < carry);
  }
  mant[n - 1] |= carry << (kLimbBits - 1);  // 0.11…1 rounded up: 0.10…0 · 2¹
  r->_mpfr_sign = negative ? -1 : 1;
  r->_mpfr_exp = static_cast<mpfr_exp_t>(lsb + top + 1 + static_cast<int64_t>(carry));
}


// r ← the two's complement window a (size limbs, bit 0 weighing 2^lsb) rounded to nearest at
// `bits`, when that is the rounding of every real within 2^eb units of it (eb < 0: a is the
// exact sum; `cut`: it may not be); false (r untouched) when it is not, or when the result
// could be near MPFR's exponent limits [emin, emax].
bool round_decided(Limb* a, int size, int64_t lsb, int64_t eb, bool cut, long bits, int64_t emin,
                   int64_t emax, __mpfr_struct* r) {
  bool negative = false;
  const int t = magnitude_in_place(a, size, &negative);
  if (t < 0) {
    if (cut) return false;
    mpfr_set_zero(r, 1);  // an exact zero sum is +0
    return true;
  }
  int64_t top = int64_t{t} * kLimbBits + (kLimbBits - 1 - __builtin_clzll(a[t]));
  if (lsb - 1 <= emin || lsb + int64_t{kLimbBits} * size + 1 >= emax) return false;
  if (!decided(a, top, eb, bits)) return false;
  round_window(a, size, lsb, bits, static_cast<int>((bits + kLimbBits - 1) / kLimbBits), r);
  if (negative) r->_mpfr_sign = -1;
  return true;
}

}  // namespace presk::reference::limbs
