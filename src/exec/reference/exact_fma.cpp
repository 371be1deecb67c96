// The limb kernel of exact_fma.h. A regular MPFR number of precision p is sign · 0.M · 2^e with
// M an integer of N = ⌈p/64⌉ limbs whose top bit is set and whose N·64 − p lowest bits are 0.
// One term r ← ∘(x·y + r):
//   1. P = Mx·My exactly (2N limbs; its top bit may be 0), of value 0.P · 2^(ex + ey).
//   2. Both P and Mr are placed in a window of W = 2N + 2 limbs aligned on the larger exponent
//      eL: a number of exponent eL has its top bit at bit (W − 1)·64 − 1 (the top limb takes a
//      carry), so P fills limbs 1 … 2N and limb 0 is a guard. The operand of smaller exponent is
//      shifted right by the exponent difference; bits that fall below bit 0 are "jammed": bit 0
//      is set when any of them is nonzero. They fall off only when the exponents differ by
//      more than 64, so the result is at least a quarter of the larger operand and its rounding
//      point lies ≥ 60 bits above bit 0: the jammed and the exact sums then lie strictly
//      between the same two multiples of 2, round the same way and never tie.
//   3. Same signs add, opposite signs subtract the smaller from the larger (an exact cancel
//      gives +0, as RNDN does). The result is normalized and rounded once to p bits, to
//      nearest with ties to even.
#include "exec/reference/exact_fma.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "exec/reference/limbs.h"

namespace presk::reference {
namespace {

using limbs::add_carry;
using limbs::kLimbBits;
using limbs::Limb;
using limbs::multiply;
using limbs::spill;

// The running value of a chain: +0, a regular number, or something else (−0, ±∞, NaN) that
// only mpfr_fma handles.
enum class State { Zero, Regular, Special };

// The precision and exponent range every result must fit.
struct Limits {
  long bits;
  long emin;
  long emax;
};

template <int N>
struct Accumulator {
  State state = State::Zero;
  int sign = 1;          // ±1 (Regular)
  int64_t exponent = 0;  // e of 0.M · 2^e (Regular)
  Limb m[N] = {};
};

template <int N>
void load(Accumulator<N>& acc, const __mpfr_struct* r) {
  if (mpfr_regular_p(r)) {
    acc.state = State::Regular;
    acc.sign = r->_mpfr_sign < 0 ? -1 : 1;
    acc.exponent = r->_mpfr_exp;
    std::memcpy(acc.m, r->_mpfr_d, sizeof acc.m);
  } else {
    acc.state = mpfr_zero_p(r) && !mpfr_signbit(r) ? State::Zero : State::Special;
  }
}

template <int N>
void store(const Accumulator<N>& acc, __mpfr_struct* r) {
  if (acc.state == State::Zero) {
    mpfr_set_zero(r, 1);
  } else if (acc.state == State::Regular) {
    r->_mpfr_sign = acc.sign;
    r->_mpfr_exp = acc.exponent;
    std::memcpy(r->_mpfr_d, acc.m, sizeof acc.m);
  }  // Special: r already holds it
}

// The general case of place(): any shift; bits that fall below bit 0 are jammed into bit 0.
template <int W>
void place_far(Limb* x, const Limb* mant, int m, int64_t d) {
  d = std::min<int64_t>(d, (W + 1) * kLimbBits);  // further: everything is below bit 0
  auto q = static_cast<int>(d / kLimbBits), s = static_cast<int>(d % kLimbBits);
  int first = q - (W - 1 - m);  // the limb of M that lands in x[0]
  auto limb = [&](int i) { return i >= 0 && i < m ? mant[i] : Limb{0}; };
  for (int j = 0; j < W - 1; ++j) x[j] = (limb(j + first) >> s) | spill(limb(j + first + 1), s);
  x[W - 1] = 0;
  bool sticky = false;
  for (int i = 0; i < std::min(first, m); ++i) sticky |= mant[i] != 0;
  if (first >= 0 && first < m) sticky |= spill(mant[first], s) != 0;  // its low s bits
  if (sticky) x[0] |= 1;
}

// Writes the M-limb significand `mant` into the W-limb window x shifted right by d ≥ 0 bits
// from the aligned position (its top limb at limb W − 2, limb W − 1 zero).
template <int W, int M>
void place(Limb* x, const Limb* mant, int64_t d) {
  constexpr int kBase = W - 1 - M;  // ≥ 1: a shift below 64 bits loses nothing
  static_assert(kBase >= 1);
  if (d >= kLimbBits) return place_far<W>(x, mant, M, d);
  auto s = static_cast<int>(d);
  for (int j = 0; j < W; ++j) x[j] = 0;
  x[kBase - 1] = spill(mant[0], s);
  for (int i = 0; i + 1 < M; ++i) x[kBase + i] = (mant[i] >> s) | spill(mant[i + 1], s);
  x[kBase + M - 1] = mant[M - 1] >> s;
}

// a ← a + b, or a − b in two's complement when `negate` is all ones (0: add).
template <int W>
void add_signed(Limb* a, const Limb* b, Limb negate) {
  unsigned char carry = negate & 1;
  for (int j = 0; j < W; ++j) carry = add_carry(carry, a[j], b[j] ^ negate, &a[j]);
}

// a ← −a in two's complement when `flip` is all ones (0: unchanged).
template <int W>
void negate_if(Limb* a, Limb flip) {
  unsigned char carry = flip & 1;
  for (int j = 0; j < W; ++j) carry = add_carry(carry, a[j] ^ flip, 0, &a[j]);
}

// Shifts x left by whole limbs until one of its top two limbs is nonzero (x ≠ 0, a deep
// cancellation); returns the bits shifted.
template <int W>
int64_t raise_limbs(Limb* x) {
  int64_t shifted = 0;
  while (x[W - 1] == 0 && x[W - 2] == 0) {
    for (int j = W - 1; j > 0; --j) x[j] = x[j - 1];
    x[0] = 0;
    shifted += kLimbBits;
  }
  return shifted;
}

// Rounds the nonzero window x, of value x · 2^(e_top − (W − 1)·64), to p bits into `acc`,
// to nearest, ties to even. False (acc untouched) when the exponent leaves [emin, emax].
template <int N, int W>
bool round_window(Limb* x, int64_t e_top, int sign, const Limits& limits, Accumulator<N>& acc) {
  int64_t exponent = e_top + kLimbBits - raise_limbs<W>(x);
  int t = x[W - 1] != 0 ? W - 1 : W - 2;  // the leading limb
  int c = __builtin_clzll(x[t]);
  exponent -= static_cast<int64_t>(W - 1 - t) * kLimbBits + c;
  // top[0 … N]: limbs t − N … t shifted left by c (top[1 … N] is the significand); below
  // them, `sticky` gathers the rest.
  Limb top[N + 1];
  for (int i = 0; i <= N; ++i) {
    top[i] = (x[t - N + i] << c) | ((x[t - N + i - 1] >> 1) >> (kLimbBits - 1 - c));
  }
  Limb sticky = x[t - N - 1] << c;
  for (int j = 0; j < W - N - 2; ++j) sticky |= j <= t - N - 2 ? x[j] : 0;
  Limb* mant = top + 1;
  int sh = N * kLimbBits - static_cast<int>(limits.bits);  // unused low bits of mant[0]
  Limb round_bit;
  if (sh > 0) {
    round_bit = (mant[0] >> (sh - 1)) & 1;
    sticky |= (mant[0] & ((Limb{1} << (sh - 1)) - 1)) | top[0];
  } else {
    round_bit = top[0] >> (kLimbBits - 1);
    sticky |= top[0] << 1;
  }
  Limb ulp = Limb{1} << sh;
  mant[0] &= ~(ulp - 1);
  Limb carry = round_bit & static_cast<Limb>(sticky != 0 || (mant[0] & ulp) != 0);
  carry *= ulp;
  for (int j = 0; j < N; ++j) {
    mant[j] += carry;
    carry = static_cast<Limb>(mant[j] < carry);
  }
  mant[N - 1] |= carry << (kLimbBits - 1);  // 0.11…1 rounded up: 0.10…0 · 2¹
  exponent += static_cast<int64_t>(carry);
  if (exponent < limits.emin || exponent > limits.emax) return false;
  acc.state = State::Regular;
  acc.sign = sign;
  acc.exponent = exponent;
  std::memcpy(acc.m, mant, sizeof acc.m);
  return true;
}

// One term on regular x and y: acc ← ∘(x·y + acc). False (acc untouched) when the result's
// exponent would leave [emin, emax]; the caller then asks mpfr_fma.
template <int N>
bool fma_step(Accumulator<N>& acc, const __mpfr_struct* x, const __mpfr_struct* y,
              const Limits& limits) {
  constexpr int W = 2 * N + 2;
  Limb product[2 * N];
  multiply<N>(x->_mpfr_d, y->_mpfr_d, product);
  int64_t e_product = static_cast<int64_t>(x->_mpfr_exp) + y->_mpfr_exp;
  int sign = (x->_mpfr_sign < 0) == (y->_mpfr_sign < 0) ? 1 : -1;
  Limb a[W], b[W];
  if (acc.state == State::Zero) {
    place<W, 2 * N>(a, product, 0);
    return round_window<N, W>(a, e_product, sign, limits, acc);
  }
  int64_t e_top = std::max(e_product, acc.exponent);
  place<W, 2 * N>(a, product, e_top - e_product);
  place<W, N>(b, acc.m, e_top - acc.exponent);
  add_signed<W>(a, b, sign == acc.sign ? 0 : ~Limb{0});
  Limb flip = Limb{0} - (a[W - 1] >> (kLimbBits - 1));  // a − b < 0: take b's sign
  negate_if<W>(a, flip);
  sign = flip != 0 ? acc.sign : sign;
  Limb any = 0;
  for (int j = 0; j < W; ++j) any |= a[j];
  if (any == 0) {  // exact cancellation: +0
    acc.state = State::Zero;
    return true;
  }
  return round_window<N, W>(a, e_top, sign, limits, acc);
}

bool is_finite(const __mpfr_struct* x) { return mpfr_regular_p(x) || mpfr_zero_p(x); }

template <int N>
void chain(__mpfr_struct* r, const __mpfr_struct* x, int64_t x_stride, const __mpfr_struct* y,
           int64_t y_stride, int64_t count) {
  Limits limits{mpfr_get_prec(r), mpfr_get_emin(), mpfr_get_emax()};
  Accumulator<N> acc;
  load(acc, r);
  for (int64_t k = 0; k < count; ++k, x += x_stride, y += y_stride) {
    bool regular = mpfr_regular_p(x) && mpfr_regular_p(y);
    if (regular && acc.state != State::Special && fma_step(acc, x, y, limits)) continue;
    bool zero_term = (mpfr_zero_p(x) && is_finite(y)) || (mpfr_zero_p(y) && is_finite(x));
    if (zero_term && acc.state == State::Regular) continue;  // r + (±0) = r exactly
    store(acc, r);
    mpfr_fma(r, x, y, r, MPFR_RNDN);
    load(acc, r);
  }
  store(acc, r);
}

using Chain = void (*)(__mpfr_struct*, const __mpfr_struct*, int64_t, const __mpfr_struct*,
                       int64_t, int64_t);

template <int... Ns>
constexpr auto chain_table(std::integer_sequence<int, Ns...>) {
  return std::array<Chain, sizeof...(Ns)>{&chain<Ns + 1>...};
}

constexpr auto kChains = chain_table(std::make_integer_sequence<int, kExactFmaMaxBits / 64>());

}  // namespace

void fma_chain(__mpfr_struct* r, const __mpfr_struct* x, int64_t x_stride,
               const __mpfr_struct* y, int64_t y_stride, int64_t count) {
  if (count <= 0) return;
  long p = mpfr_get_prec(r);
  if (p > kExactFmaMaxBits || mpfr_get_prec(x) != p || mpfr_get_prec(y) != p) {
    for (int64_t k = 0; k < count; ++k) {
      mpfr_fma(r, x + k * x_stride, y + k * y_stride, r, MPFR_RNDN);
    }
    return;
  }
  kChains[static_cast<size_t>((p + kLimbBits - 1) / kLimbBits - 1)](r, x, x_stride, y, y_stride,
                                                                    count);
}

}  // namespace presk::reference
