// The fixed-point rows of fixed_dot.h. A regular MPFR number of precision p is
// sign · D · 2^(e − 64N), D an integer of N = ⌈p/64⌉ limbs with its top bit set, so
// X = ⌊D · 2^(e − h + 64(L − N))⌋: a shift of D, cut where the shift is negative.
#include "exec/reference/fixed_dot.h"

#include <algorithm>
#include <array>
#include <utility>

#include "exec/reference/limbs.h"
#include "exec/reference/ops.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

using limbs::add_carry;
using limbs::kLimbBits;
using limbs::Limb;
using limbs::product;
using limbs::Wide;

constexpr int kMaxLimbs = 5;  // L ≤ N + 1 ≤ 5 (256 bits)

int limbs_of(long bits) { return static_cast<int>((bits + kLimbBits - 1) / kLimbBits); }

// a (P + 1 limbs) += q + (m & 1) + m·2^(64P): one chain of add-with-carry (the flag is set from
// m's low bit and carried through; GCC splits such a chain when it is written with intrinsics).
template <int P>
inline void add_signed(Limb* a, const Limb* q, Limb m) {
  if constexpr (P == 5) {
    asm("bt $0, %[m]\n\tadc %[q0], %[a0]\n\tadc %[q1], %[a1]\n\tadc %[q2], %[a2]\n\t"
        "adc %[q3], %[a3]\n\tadc %[q4], %[a4]\n\tadc %[m], %[a5]"
        : [a0] "+r"(a[0]), [a1] "+r"(a[1]), [a2] "+r"(a[2]), [a3] "+r"(a[3]), [a4] "+r"(a[4]), [a5] "+r"(a[5])
        : [q0] "r"(q[0]), [q1] "r"(q[1]), [q2] "r"(q[2]), [q3] "r"(q[3]), [q4] "r"(q[4]), [m] "r"(m)
        : "cc");
  } else if constexpr (P == 6) {
    asm("bt $0, %[m]\n\tadc %[q0], %[a0]\n\tadc %[q1], %[a1]\n\tadc %[q2], %[a2]\n\t"
        "adc %[q3], %[a3]\n\tadc %[q4], %[a4]\n\tadc %[q5], %[a5]\n\tadc %[m], %[a6]"
        : [a0] "+r"(a[0]), [a1] "+r"(a[1]), [a2] "+r"(a[2]), [a3] "+r"(a[3]), [a4] "+r"(a[4]), [a5] "+r"(a[5]),
          [a6] "+r"(a[6])
        : [q0] "rm"(q[0]), [q1] "rm"(q[1]), [q2] "rm"(q[2]), [q3] "rm"(q[3]), [q4] "rm"(q[4]), [q5] "rm"(q[5]),
          [m] "r"(m)
        : "cc");
  } else {
    auto c = static_cast<unsigned char>(m & 1);
    for (int i = 0; i < P; ++i) c = add_carry(c, a[i], q[i], &a[i]);
    add_carry(c, a[P], m, &a[P]);
  }
}

// a (LX + LW + 1 limbs, two's complement) = Σ_k ±X_k·W_k over `count` entries of each row
// (entry: its sign mask, then its limbs). A negative product is added as its complement plus
// one, the mask extending it to the top limb: no branch on the sign.
template <int LX, int LW>
void accumulate(const Limb* x, const Limb* w, int64_t count, Limb* out) {
  constexpr int P = LX + LW;
  Limb a[P + 1] = {};
  for (int64_t k = 0; k < count; ++k, x += LX + 1, w += LW + 1) {
    Limb m = x[0] ^ w[0];
    Limb p[P];
    product<LX, LW>(x + 1, w + 1, p);
    for (int i = 0; i < P; ++i) p[i] ^= m;
    add_signed<P>(a, p, m);
  }
  for (int i = 0; i <= P; ++i) out[i] = a[i];
}

using Accumulate = void (*)(const Limb*, const Limb*, int64_t, Limb*);

template <int I>
constexpr Accumulate accumulate_at() {
  return &accumulate<I / kMaxLimbs + 1, I % kMaxLimbs + 1>;
}

template <int... Is>
constexpr auto accumulate_table(std::integer_sequence<int, Is...>) {
  return std::array<Accumulate, sizeof...(Is)>{accumulate_at<Is>()...};
}

constexpr auto kAccumulate = accumulate_table(std::make_integer_sequence<int, kMaxLimbs * kMaxLimbs>());

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

// ⌈log₂ n⌉ for n ≥ 1.
int ceil_log2(int64_t n) { return n <= 1 ? 0 : kLimbBits - __builtin_clzll(static_cast<uint64_t>(n - 1)); }

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

}  // namespace

FixedRows::FixedRows(long bits, const __mpfr_struct* data, const std::vector<int64_t>& row_base,
                     const std::vector<int64_t>& offsets)
    : bits_(bits),
      emin_(mpfr_get_emin()),
      emax_(mpfr_get_emax()),
      count_(static_cast<int64_t>(offsets.size())),
      rows_(row_base.size()) {
  internal_assert(supports(bits));
  int n = limbs_of(bits);
  // the operand's significant limbs: a binary64 value read at 128 bits has one
  std::vector<int> significant(row_base.size(), 1);
  parallel_chunks(static_cast<int64_t>(row_base.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t offset : offsets) {
        const __mpfr_struct* v = data + row_base[r] + offset;
        if (!mpfr_regular_p(v)) continue;
        int low = 0;
        while (v->_mpfr_d[low] == 0) ++low;
        significant[r] = std::max(significant[r], n - low);
      }
    }
  });
  limbs_ = significant.empty() ? 2 : *std::max_element(significant.begin(), significant.end()) + 1;
  words_.assign(rows_.size() * static_cast<size_t>(count_) * static_cast<size_t>(limbs_ + 1), 0);
  parallel_chunks(static_cast<int64_t>(row_base.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) pack_row(data, row_base[r], offsets, r);
  });
}

void FixedRows::pack_row(const __mpfr_struct* data, int64_t base, const std::vector<int64_t>& offsets,
                         int64_t r) {
  Row& row = rows_[r];
  int n = limbs_of(bits_);
  bool any = false;
  for (int64_t k = 0; k < count_; ++k) {
    const __mpfr_struct* v = data + base + offsets[k];
    if (mpfr_nan_p(v) || mpfr_inf_p(v)) row.special = true;
    if (!mpfr_regular_p(v)) continue;
    row.top = any ? std::max<int64_t>(row.top, v->_mpfr_exp) : v->_mpfr_exp;
    row.end = k + 1;
    any = true;
  }
  if (row.special) return;
  Limb* out = words_.data() + static_cast<size_t>(r) * static_cast<size_t>(count_) * (limbs_ + 1);
  for (int64_t k = 0; k < row.end; ++k, out += limbs_ + 1) {
    const __mpfr_struct* v = data + base + offsets[k];
    if (!mpfr_regular_p(v)) continue;
    out[0] = v->_mpfr_sign < 0 ? ~Limb{0} : 0;
    int64_t shift = v->_mpfr_exp - row.top + int64_t{kLimbBits} * (limbs_ - n);  // X = D·2^shift
    for (int i = 0; i < limbs_; ++i) out[1 + i] = limbs::bits_at(v->_mpfr_d, n, int64_t{i} * kLimbBits - shift);
    if (shift < 0 && limbs::any_below(v->_mpfr_d, std::min<int64_t>(-shift, int64_t{n} * kLimbBits))) {
      row.cut = true;
    }
  }
}

bool FixedRows::dot(const FixedRows& x, int64_t xr, const FixedRows& w, int64_t wr, __mpfr_struct* r) {
  const Row& rx = x.rows_[xr];
  const Row& rw = w.rows_[wr];
  if (rx.special || rw.special) return false;
  internal_assert(x.count_ == w.count_ && x.bits_ == w.bits_ && mpfr_get_prec(r) == x.bits_);
  int lx = x.limbs_, lw = w.limbs_, size = lx + lw + 1;
  int64_t terms = std::min(rx.end, rw.end);
  Limb a[2 * kMaxLimbs + 1];
  kAccumulate[static_cast<size_t>((lx - 1) * kMaxLimbs + (lw - 1))](
      x.words_.data() + static_cast<size_t>(xr) * static_cast<size_t>(x.count_) * (lx + 1),
      w.words_.data() + static_cast<size_t>(wr) * static_cast<size_t>(w.count_) * (lw + 1), terms, a);
  bool negative = (a[size - 1] >> (kLimbBits - 1)) != 0;
  if (negative) {
    unsigned char c = 1;
    for (int j = 0; j < size; ++j) c = add_carry(c, ~a[j], 0, &a[j]);
  }
  int t = size - 1;
  while (t >= 0 && a[t] == 0) --t;
  bool cut = rx.cut || rw.cut;
  if (t < 0) {
    if (cut) return false;
    mpfr_set_zero(r, 1);  // an exact zero sum is +0
    return true;
  }
  int64_t top = int64_t{t} * kLimbBits + (kLimbBits - 1 - __builtin_clzll(a[t]));
  int64_t lsb = rx.top + rw.top - int64_t{kLimbBits} * (lx + lw);
  if (lsb - 1 <= x.emin_ || lsb + int64_t{kLimbBits} * size + 1 >= x.emax_) return false;
  int64_t eb = -1;  // the bound on what the cuts lost: below 2^eb units
  if (cut) {
    eb = ceil_log2(terms) + kLimbBits * std::max(rx.cut ? lw : 0, rw.cut ? lx : 0) + 2;
  }
  if (!decided(a, top, eb, x.bits_)) return false;
  limbs::round_window(a, size, lsb, x.bits_, limbs_of(x.bits_), r);
  if (negative) r->_mpfr_sign = -1;
  return true;
}

}  // namespace presk::reference
