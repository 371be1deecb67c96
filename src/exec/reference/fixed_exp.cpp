// fixed_exp.h: the kernel's integers are in units of 2^-192 (Q0.192, three limbs) unless said
// otherwise; every step floors, so each computed value is at most the exact one.
#include "exec/reference/fixed_exp.h"

#include <algorithm>
#include <cmath>

#include "exec/reference/limbs.h"

namespace presk::reference {
namespace {

using limbs::Limb;
using limbs::Wide;

// ⌊A·B / 2^(64S)⌋ less what the partial products below column S − 1 would add: each product
// in column S − 2 is below one unit (those below it 2^-64), so the result is short of the
// exact quotient by less than (column S − 2's products) + 1 units. NA + NB − S limbs, formed
// column by column in a three-limb accumulator (c0 the column, c1 and c2 the two above).
template <int NA, int NB, int S>
[[gnu::always_inline]] inline void mul_high(const Limb* a, const Limb* b, Limb* out) {
  Limb c0 = 0, c1 = 0, c2 = 0;
  for (int column = S - 1; column < NA + NB - 1; ++column) {
    for (int i = std::max(0, column - NB + 1); i <= std::min(column, NA - 1); ++i) {
      const Wide p = static_cast<Wide>(a[i]) * b[column - i];
      const Wide low = static_cast<Wide>(c0) + static_cast<Limb>(p);
      const Wide high = static_cast<Wide>(c1) + static_cast<Limb>(p >> 64) + static_cast<Limb>(low >> 64);
      c0 = static_cast<Limb>(low);
      c1 = static_cast<Limb>(high);
      c2 += static_cast<Limb>(high >> 64);
    }
    if (column >= S) out[column - S] = c0;
    c0 = c1, c1 = c2, c2 = 0;
  }
  out[NA + NB - 1 - S] = c0;  // the top column: carries only
}

// a ← a + b, N limbs (no carry out: the sums here stay below 1).
template <int N>
[[gnu::always_inline]] inline void add_to(Limb* a, const Limb* b) {
  unsigned char carry = 0;
  for (int i = 0; i < N; ++i) carry = limbs::add_carry(carry, a[i], b[i], &a[i]);
}

struct Tables {
  Limb ln2[4];        // ⌊ln 2·2^256⌋
  Limb ln2_192[3];    // ⌊ln 2·2^192⌋
  Limb e[4][256][3];  // E₁[j] = ⌊exp(j/2^8)/2·2^192⌋ (j < 178 used), E_m[j] = ⌊expm1(j·2^-8m)·2^192⌋
};

// out (n limbs) ← ⌊v·2^shift⌋, v ≥ 0 (v is scaled in place). v rounded down at 512 bits: at
// most one unit short, and never above.
void floor_scaled(mpfr_ptr v, long shift, Limb* out, int n) {
  mpfr_mul_2si(v, v, shift, MPFR_RNDN);
  mpz_t z;
  mpz_init(z);
  mpfr_get_z(z, v, MPFR_RNDD);
  for (int i = 0; i < n; ++i) out[i] = mpz_getlimbn(z, i);
  mpz_clear(z);
}

const Tables& tables() {
  static const Tables made = [] {
    Tables t{};
    mpfr_t v;
    mpfr_init2(v, 512);
    mpfr_const_log2(v, MPFR_RNDD);
    floor_scaled(v, 256, t.ln2, 4);
    mpfr_const_log2(v, MPFR_RNDD);
    floor_scaled(v, 192, t.ln2_192, 3);
    for (unsigned j = 0; j < 256; ++j) {
      mpfr_set_ui_2exp(v, j, -8, MPFR_RNDN);
      mpfr_exp(v, v, MPFR_RNDD);
      mpfr_div_2ui(v, v, 1, MPFR_RNDN);
      floor_scaled(v, 192, t.e[0][j], 3);
      for (int m = 1; m < 4; ++m) {
        mpfr_set_ui_2exp(v, j, -8 * (m + 1), MPFR_RNDN);
        mpfr_expm1(v, v, MPFR_RNDD);
        floor_scaled(v, 192, t.e[m][j], 3);
      }
    }
    mpfr_clear(v);
    return t;
  }();
  return made;
}

// ⌊2^128/6⌋, ⌊2^64/24⌋, ⌊2^64/120⌋: P's divisions as multiplications (each short of the
// quotient by less than one unit more).
constexpr Limb kInverse6[2] = {0xaaaaaaaaaaaaaaaaULL, 0x2aaaaaaaaaaaaaaaULL};
constexpr Limb kInverse24 = 0x0aaaaaaaaaaaaaaaULL;
constexpr Limb kInverse120 = 0x0222222222222222ULL;

// P(t) = t + t²/2 + t³/6 + t⁴/24 + t⁵/120 for t < 2^-32 (T < 2^160): short of expm1(t) by
// less than 2.5 + 2.51 + 2.13 + 1.02 units and the tail t⁶/720·1.01 < 0.002.
void taylor(const Limb* t, Limb* p) {
  Limb s2[3], s3[2], s4[2], s5[1], term3[2];
  mul_high<3, 3, 3>(t, t, s2);   // t², < 2^128, short by < 3
  mul_high<2, 3, 3>(s2, t, s3);  // t³, < 2^96, short by < 3.01
  mul_high<2, 3, 3>(s3, t, s4);  // t⁴, < 2^64, short by < 3.01
  mul_high<1, 3, 3>(s4, t, s5);  // t⁵, < 2^32, short by < 2.01
  mul_high<2, 2, 2>(s3, kInverse6, term3);
  const Limb term2[3] = {(s2[0] >> 1) | (s2[1] << 63), s2[1] >> 1, 0};
  const Limb term3_3[3] = {term3[0], term3[1], 0};
  const Limb low[3] = {static_cast<Limb>((static_cast<Wide>(s4[0]) * kInverse24) >> 64) +
                           static_cast<Limb>((static_cast<Wide>(s5[0]) * kInverse120) >> 64),
                       0, 0};
  p[0] = t[0], p[1] = t[1], p[2] = t[2];
  add_to<3>(p, term2);
  add_to<3>(p, term3_3);
  add_to<3>(p, low);
}

// out (4 limbs, two's complement) ← k·ln 2·2^192 rounded toward zero: within one unit.
void k_ln2(int64_t k, Limb* out) {
  const Limb m = k < 0 ? static_cast<Limb>(-k) : static_cast<Limb>(k);
  Limb p[5];
  limbs::product<4, 1>(tables().ln2, &m, p);
  for (int i = 0; i < 4; ++i) out[i] = p[i + 1];
  if (k < 0) limbs::negate<4>(out);
}

// Whether a (4 limbs, nonnegative) < b (3 limbs).
bool below(const Limb* a, const Limb* b) {
  if (a[3] != 0) return false;
  for (int i = 2; i >= 0; --i) {
    if (a[i] != b[i]) return a[i] < b[i];
  }
  return false;
}

// ⌊|x|·2^shift⌋ in 4 limbs (|x| < 2^(256 − shift)).
void magnitude(mpfr_srcptr x, long shift, Limb* out) {
  const int n = static_cast<int>((mpfr_get_prec(x) + 63) / 64);
  const int64_t at = int64_t{mpfr_get_exp(x)} - 64 * n + shift;  // out = D·2^at
  for (int i = 0; i < 4; ++i) out[i] = limbs::bits_at(x->_mpfr_d, n, 64 * i - at);
}

// r ← ∘(y·2^lsb) to nearest at `bits` ≤ 128 when every real within 2^eb units of y (3 limbs,
// positive) rounds alike; false otherwise. limbs::round_decided's test (no real within the
// bound of a midpoint) on a number normalized to 192 bits, where the rounding is two limbs: a
// real within the bound of y that lies across a power of two rounds as y does too, since the
// bound is below a quarter of the lower binade's ulp. False too for a result outside MPFR's
// exponent range (mpfr_exp and mpfr_tanh decide those). The rounding is limbs::round_window256.
bool round_fixed(const Limb* y, int64_t lsb, int eb, long bits, mpfr_ptr r) {
  const int lz = y[2] != 0 ? __builtin_clzll(y[2]) : y[1] != 0 ? 64 + __builtin_clzll(y[1]) : y[0] != 0 ? 128 + __builtin_clzll(y[0]) : 192;
  const int kept = 192 - static_cast<int>(bits), e = eb + lz;  // the bound, 2^e units of n
  if (e + 3 > kept) return false;
  Limb n[3];  // y·2^lz
  for (int i = 0; i < 3; ++i) n[i] = limbs::bits_at(y, 3, 64 * i - lz);
  const bool round_bit = ((n[(kept - 1) / 64] >> ((kept - 1) % 64)) & 1) != 0;
  if (limbs::all_bits(n, e, kept - 1, !round_bit)) return false;  // within the bound of a midpoint
  // n is no midpoint (the test above), so rounding it to nearest is rounding every real here
  return limbs::round_window256(r, static_cast<Wide>(n[2]) << 64 | n[1], static_cast<Wide>(n[0]) << 64, false,
                                lsb - lz + 192, 1);
}

// q (3 limbs) ← (1 − z)/(1 + z) = 2w − 1, w = 1/(1 + z), for z (3 limbs) in [0, 1): within
// 2·9 units and twice z's own error. From w₀ = 1/(1 + z) in binary64 (W₀ = ⌊w₀·2^64⌋), the
// exact e = 1 − (1 + z)·w₀ (|e| < 2^-50) gives w = w₀/(1 − e) = w₀·(1 + e + e² + e³) + a tail
// below 2^-203; |e| floored at 2^-192 (1 unit), e² and e³ as mul_high (3 units each), the
// three products by W₀ floored (1 unit each): W within 9 units. False where q would be
// negative (z within that bound of 1: |x| too small, a case for the next path).
bool tanh_quotient(const Limb* z, Limb* q) {
  const double w0 = 1.0 / (1.0 + (static_cast<double>(z[2]) * 0x1p-64 + static_cast<double>(z[1]) * 0x1p-128));
  const Limb w = w0 >= 1.0 ? ~Limb{0} : static_cast<Limb>(w0 * 0x1p64);
  Limb dw[5];  // (2^192 + Z)·W₀, units 2^-256
  limbs::product<3, 1>(z, &w, dw);
  dw[4] = limbs::add_carry(0, dw[3], w, &dw[3]);
  Limb e[5] = {0, 0, 0, 0, 1};  // E = 2^256 − (2^192 + Z)·W₀ = e·2^256
  limbs::subtract(e, dw, 5);
  const bool below = (e[4] >> 63) != 0;  // e < 0: w₀ above w
  if (below) limbs::negate<5>(e);
  const Limb a[3] = {e[1], e[2], e[3]};  // |e| in units 2^-192, below 2^142
  Limb e2[3], e3[3], odd[3], part[4];
  mul_high<3, 3, 3>(a, a, e2);
  mul_high<3, 3, 3>(e2, a, e3);
  odd[0] = a[0], odd[1] = a[1], odd[2] = a[2];
  add_to<3>(odd, e3);  // |e| + |e|³
  Limb wide[4] = {0, 0, w, 0};  // W = W₀·2^128 ± ⌊W₀·(|e| + |e|³)/2^64⌋ + ⌊W₀·e²/2^64⌋
  limbs::product<3, 1>(odd, &w, part);
  const Limb odd_part[4] = {part[1], part[2], part[3], 0};
  if (below) {
    limbs::subtract(wide, odd_part, 4);
  } else {
    add_to<4>(wide, odd_part);
  }
  limbs::product<3, 1>(e2, &w, part);
  const Limb even_part[4] = {part[1], part[2], part[3], 0};
  add_to<4>(wide, even_part);
  // q = 2W − 2^192, in [0, 2^192) unless z is within the bound of 1 (or W of 2^192: z near 0)
  const Limb twice[4] = {wide[0] << 1, (wide[1] << 1) | (wide[0] >> 63), (wide[2] << 1) | (wide[1] >> 63),
                         (wide[3] << 1) | (wide[2] >> 63)};
  if (twice[3] != 1) return false;
  q[0] = twice[0], q[1] = twice[1], q[2] = twice[2];
  return q[0] != 0 || q[1] != 0 || q[2] != 0;
}

}  // namespace

bool exp_fixed(bool negative, const uint64_t* magnitude, FixedExp* out) {
  const Tables& t = tables();
  Limb x[4] = {magnitude[0], magnitude[1], magnitude[2], magnitude[3]};
  if (negative) limbs::negate<4>(x);
  const double v = (static_cast<double>(magnitude[3]) * 0x1p64 + static_cast<double>(magnitude[2])) * 0x1p-64;
  int64_t k = static_cast<int64_t>(std::floor((negative ? -v : v) * 1.4426950408889634));
  Limb r[4];
  for (int tries = 0;; ++tries) {  // 0 ≤ R < ⌊ln 2·2^192⌋, else k moves by one
    if (tries == 4) return false;
    Limb kl[4];
    k_ln2(k, kl);
    for (int i = 0; i < 4; ++i) r[i] = x[i];
    limbs::subtract(r, kl, 4);
    if ((r[3] >> 63) != 0) {
      --k;
    } else if (!below(r, t.ln2_192)) {
      ++k;
    } else {
      break;
    }
  }
  const Limb top = r[2];
  const Limb rest[3] = {r[0], r[1], top & 0xffffffffULL};
  Limb p[3], y[3], part[3];
  taylor(rest, p);
  const Limb* e1 = t.e[0][top >> 56];
  y[0] = e1[0], y[1] = e1[1], y[2] = e1[2];
  for (int m = 1; m < 4; ++m) {  // y ← y + y·E_m[j_m]
    mul_high<3, 3, 3>(y, t.e[m][(top >> (56 - 8 * m)) & 0xff], part);
    add_to<3>(y, part);
  }
  mul_high<3, 3, 3>(y, p, part);
  add_to<3>(y, part);
  out->y[0] = y[0], out->y[1] = y[1], out->y[2] = y[2];
  out->k = k;
  return true;
}

bool exp_decided(mpfr_ptr r, mpfr_srcptr x) {
  const long bits = mpfr_get_prec(r);
  if (bits > kFixedExpMaxBits || !mpfr_regular_p(x) || mpfr_get_exp(x) > 20) return false;
  Limb m[4];
  magnitude(x, 192, m);  // within one unit of |x|: y within 1.01 more
  FixedExp e;
  if (!exp_fixed(mpfr_signbit(x) != 0, m, &e)) return false;
  return round_fixed(e.y, e.k + 1 - 192, kFixedExpErrorBits, bits, r);
}

bool tanh_fixed(const uint64_t* magnitude, uint64_t* q) {
  FixedExp e;
  if (!exp_fixed(true, magnitude, &e)) return false;
  if (e.k >= 0) return false;  // 2|x| below 2^-192: z = 1, tanh too small for the bound
  const int64_t shift = -(e.k + 1);  // z = exp(−2|x|) = y·2^-shift, within 29.4 units
  Limb z[3] = {0, 0, 0};
  for (int i = 0; i < 3 && shift < 192; ++i) z[i] = limbs::bits_at(e.y, 3, 64 * i + shift);
  return tanh_quotient(z, q);
}

bool tanh_decided(mpfr_ptr r, mpfr_srcptr x) {
  const long bits = mpfr_get_prec(r);
  if (bits > kFixedExpMaxBits || !mpfr_regular_p(x) || mpfr_get_exp(x) > 5) return false;
  const bool negative = mpfr_signbit(x) != 0;
  Limb m[4], q[3];
  magnitude(x, 193, m);  // 2|x|
  if (!tanh_fixed(m, q) || !round_fixed(q, -192, kFixedExpErrorBits + 1, bits, r)) return false;
  if (negative) mpfr_neg(r, r, MPFR_RNDN);
  return true;
}

}  // namespace presk::reference
