// The fixed-point rows of fixed_dot.h. A regular MPFR number of precision p is
// sign · D · 2^(e − 64N), D an integer of N = ⌈p/64⌉ limbs with its top bit set, so
// X = ⌊D · 2^(e − h + 64(L − N))⌋: a shift of D, cut where the shift is negative. In binades,
// W = D · 2^(e − h + b·s + 64 − 64N), never cut: with e − h + b·s ∈ (−s, 0] and D's bits
// below its top m zero, the shift drops only zeros.
#include "exec/reference/fixed_dot.h"

#include <algorithm>
#include <array>
#include <bit>
#include <utility>

#include "exec/reference/fixed_dot_ifma.h"
#include "exec/reference/limbs.h"
#include "exec/reference/ops.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

using limbs::add_carry;
using limbs::round_decided;
using limbs::kLimbBits;
using limbs::Limb;
using limbs::product;
using limbs::Wide;

constexpr int kMaxLimbs = 9;  // L ≤ N + 1 ≤ 9 (512 bits)

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

// The 3 × 3 limbs of two activation rows (65–128 bits) with each product's two low limbs left
// out: a (limbs 2 … 6 of the window, two's complement) = Σ_k ±Q_k, Q_k·2^128 the part of X_k·W_k
// formed by the partial products x_i·w_j with i + j ≥ 2, exact. What is left out is below
// 2^128 + 2·2^192 < 2^194 units a term, the same order as a cut (2^192): six multiplications a
// term instead of nine, and five limbs to add instead of seven.
void accumulate_high_3x3(const Limb* x, const Limb* w, int64_t count, Limb* out) {
  Limb a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0;
  for (int64_t k = 0; k < count; ++k, x += 4, w += 4) {
    Limb c2, c3, c4, c5, high, low;
    // columns 2 … 5 of X·W from x_i·w_j, i + j ≥ 2 (X = x[1 … 3], W = w[1 … 3]); then
    // (a0 … a4) += (that ⊕ m) + (m & 1) + m·2^256, m = x[0] ⊕ w[0]
    asm("xor %k[c4], %k[c4]\n\txor %k[c5], %k[c5]\n\t"
        "mov 8(%[x]), %[low]\n\tmulq 24(%[w])\n\tmov %[low], %[c2]\n\tmov %[high], %[c3]\n\t"
        "mov 16(%[x]), %[low]\n\tmulq 16(%[w])\n\tadd %[low], %[c2]\n\tadc %[high], %[c3]\n\tadc $0, %[c4]\n\t"
        "mov 24(%[x]), %[low]\n\tmulq 8(%[w])\n\tadd %[low], %[c2]\n\tadc %[high], %[c3]\n\tadc $0, %[c4]\n\t"
        "mov 16(%[x]), %[low]\n\tmulq 24(%[w])\n\tadd %[low], %[c3]\n\tadc %[high], %[c4]\n\tadc $0, %[c5]\n\t"
        "mov 24(%[x]), %[low]\n\tmulq 16(%[w])\n\tadd %[low], %[c3]\n\tadc %[high], %[c4]\n\tadc $0, %[c5]\n\t"
        "mov 24(%[x]), %[low]\n\tmulq 24(%[w])\n\tadd %[low], %[c4]\n\tadc %[high], %[c5]\n\t"
        "mov (%[x]), %[low]\n\txor (%[w]), %[low]\n\t"
        "xor %[low], %[c2]\n\txor %[low], %[c3]\n\txor %[low], %[c4]\n\txor %[low], %[c5]\n\t"
        "bt $0, %[low]\n\tadc %[c2], %[a0]\n\tadc %[c3], %[a1]\n\tadc %[c4], %[a2]\n\t"
        "adc %[c5], %[a3]\n\tadc %[low], %[a4]"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [a4] "+r"(a4), [c2] "=&r"(c2),
          [c3] "=&r"(c3), [c4] "=&r"(c4), [c5] "=&r"(c5), [high] "=&d"(high), [low] "=&a"(low)
        : [x] "r"(x), [w] "r"(w)
        : "cc", "memory");
  }
  out[0] = a0, out[1] = a1, out[2] = a2, out[3] = a3, out[4] = a4;
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

// a (LX + 2 limbs, two's complement) += Σ ±X_k·W_k over entries [e, end) of one binade, all of
// one sign (wmask: 0 or ~0; an x row's entries past its last nonzero one are zeros).
template <int LX>
void accumulate_binade(const Limb* x, const BinadeEntry* e, const BinadeEntry* end, Limb wmask, Limb* out) {
  constexpr int P = LX + 1;
  if constexpr (LX == 3) {
    Limb a0 = out[0], a1 = out[1], a2 = out[2], a3 = out[3], a4 = out[4];
    for (; e != end; ++e) {
      const Limb* xk = x + e->k * 4;
      Limb p0, p1, p2, high, low;
      // (a0 … a4) += ((X·W) ⊕ m) + (m & 1) + m·2^256, X = xk[1 … 3], W = e->w, m the sign mask
      asm("mov 8(%[x]), %[low]\n\tmul %[w]\n\tmov %[low], %[p0]\n\tmov %[high], %[p1]\n\t"
          "mov 16(%[x]), %[low]\n\tmul %[w]\n\tadd %[low], %[p1]\n\tadc $0, %[high]\n\tmov %[high], %[p2]\n\t"
          "mov 24(%[x]), %[low]\n\tmul %[w]\n\tadd %[low], %[p2]\n\tadc $0, %[high]\n\t"
          "mov (%[x]), %[low]\n\txor %[mask], %[low]\n\t"
          "xor %[low], %[p0]\n\txor %[low], %[p1]\n\txor %[low], %[p2]\n\txor %[low], %[high]\n\t"
          "bt $0, %[low]\n\tadc %[p0], %[a0]\n\tadc %[p1], %[a1]\n\tadc %[p2], %[a2]\n\t"
          "adc %[high], %[a3]\n\tadc %[low], %[a4]"
          : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [a4] "+r"(a4), [p0] "=&r"(p0),
            [p1] "=&r"(p1), [p2] "=&r"(p2), [high] "=&d"(high), [low] "=&a"(low)
          : [x] "r"(xk), [w] "r"(e->w), [mask] "r"(wmask)
          : "cc", "memory");
    }
    out[0] = a0, out[1] = a1, out[2] = a2, out[3] = a3, out[4] = a4;
  } else {
    Limb a[P + 1];
    for (int i = 0; i <= P; ++i) a[i] = out[i];
    for (; e != end; ++e) {
      const Limb* xk = x + e->k * (LX + 1);
      Limb m = xk[0] ^ wmask;
      Limb p[P];
      product<LX, 1>(xk + 1, &e->w, p);
      for (int i = 0; i < P; ++i) p[i] ^= m;
      add_signed<P>(a, p, m);
    }
    for (int i = 0; i <= P; ++i) out[i] = a[i];
  }
}

using AccumulateBinade = void (*)(const Limb*, const BinadeEntry*, const BinadeEntry*, Limb, Limb*);
constexpr std::array<AccumulateBinade, kMaxLimbs> kAccumulateBinade = {
    &accumulate_binade<1>, &accumulate_binade<2>, &accumulate_binade<3>, &accumulate_binade<4>, &accumulate_binade<5>,
    &accumulate_binade<6>, &accumulate_binade<7>, &accumulate_binade<8>, &accumulate_binade<9>};

// total (size limbs) += a·2^shift, a two's complement of `count` limbs (sign-extended).
void add_shifted(Limb* total, int size, const Limb* a, int count, int64_t shift) {
  Limb fill = (a[count - 1] >> (kLimbBits - 1)) != 0 ? ~Limb{0} : 0;
  auto q = static_cast<int>(shift / kLimbBits), s = static_cast<int>(shift % kLimbBits);
  unsigned char c = 0;
  for (int i = q; i < size; ++i) {
    int j = i - q;
    Limb high = j < count ? a[j] : fill;
    Limb low = j == 0 ? 0 : (j - 1 < count ? a[j - 1] : fill);
    Limb v = s == 0 ? high : (high << s) | (low >> (kLimbBits - s));
    c = add_carry(c, total[i], v, &total[i]);
  }
}

// ⌈log₂ n⌉ for n ≥ 1.
int ceil_log2(int64_t n) { return n <= 1 ? 0 : kLimbBits - __builtin_clzll(static_cast<uint64_t>(n - 1)); }

// d[c] = bits [52c, 52c + 52) of u (4 limbs): the digits of IFMA's operands.
void digits_52(const Limb* u, uint64_t* d) {
  constexpr Limb kMask = (Limb{1} << 52) - 1;
  d[0] = u[0] & kMask;
  d[1] = (u[0] >> 52 | u[1] << 12) & kMask;
  d[2] = (u[1] >> 40 | u[2] << 24) & kMask;
  d[3] = (u[2] >> 28 | u[3] << 36) & kMask;
}

// An operand's entries as MPFR numbers of n limbs (the significand's top limb, top bit set).
struct MpfrEntries {
  const __mpfr_struct* data;
  int n;
  bool special(int64_t i) const { return mpfr_nan_p(data + i) || mpfr_inf_p(data + i); }
  bool regular(int64_t i) const { return mpfr_regular_p(data + i); }
  int64_t exponent(int64_t i) const { return data[i]._mpfr_exp; }
  bool negative(int64_t i) const { return data[i]._mpfr_sign < 0; }
  Limb top(int64_t i) const { return data[i]._mpfr_d[n - 1]; }
};

// An operand's entries as binary64 values, each as the MPFR number it converts to exactly:
// |x| = (D/2^64)·2^e, D its significand shifted to bit 63 (frexp's e; subnormals normalized).
struct Binary64Entries {
  const double* data;
  static uint64_t raw(double v) { return std::bit_cast<uint64_t>(v); }
  static int64_t biased(double v) { return static_cast<int64_t>((raw(v) >> 52) & 0x7ff); }
  static uint64_t fraction(double v) { return raw(v) & ((uint64_t{1} << 52) - 1); }
  bool special(int64_t i) const { return biased(data[i]) == 0x7ff; }
  bool regular(int64_t i) const { return biased(data[i]) != 0x7ff && (raw(data[i]) << 1) != 0; }
  int64_t exponent(int64_t i) const {
    const int64_t b = biased(data[i]);
    return b != 0 ? b - 1022 : -1010 - __builtin_clzll(fraction(data[i]));  // subnormal: D = f·2^clz(f)
  }
  bool negative(int64_t i) const { return (raw(data[i]) >> 63) != 0; }
  Limb top(int64_t i) const {
    const uint64_t f = fraction(data[i]);
    return biased(data[i]) != 0 ? (f | uint64_t{1} << 52) << 11 : f << __builtin_clzll(f);
  }
};

}  // namespace

FixedRows::FixedRows(long bits, size_t rows, int64_t count)
    : bits_(bits), emin_(mpfr_get_emin()), emax_(mpfr_get_emax()), count_(count), rows_(rows) {
  internal_assert(supports(bits));
}

FixedRows::FixedRows(long bits, const double* data, const std::vector<int64_t>& row_base,
                     const std::vector<int64_t>& offsets)
    : FixedRows(bits, row_base.size(), static_cast<int64_t>(offsets.size())) {
  const Binary64Entries source{data};
  std::vector<int> significant_bits(row_base.size(), 0);  // from the top to the lowest set bit
  parallel_chunks(static_cast<int64_t>(row_base.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t offset : offsets) {
        const int64_t i = row_base[r] + offset;
        if (source.regular(i)) significant_bits[r] = std::max(significant_bits[r], kLimbBits - __builtin_ctzll(source.top(i)));
      }
    }
  });
  const int m = significant_bits.empty() ? 0 : *std::max_element(significant_bits.begin(), significant_bits.end());
  pack_all_binades(source, row_base, offsets, m, has_ifma() && m <= 44);
}

template <class Source>
void FixedRows::pack_all_binades(const Source& data, const std::vector<int64_t>& row_base,
                                 const std::vector<int64_t>& offsets, int m, bool narrow) {
  internal_assert(m <= (narrow ? 44 : kLimbBits - 8));
  binade_top_ = narrow ? 52 : kLimbBits;
  binade_bits_ = std::min(binade_top_ - m, kLimbBits - 1);
  entries_.reset(new BinadeEntry[rows_.size() * static_cast<size_t>(count_)]);  // each row's slots written as used
  buckets_.resize(rows_.size() * static_cast<size_t>(kMaxBuckets));
  parallel_chunks(static_cast<int64_t>(row_base.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) pack_binades(data, row_base[r], offsets, r);
  });
}

FixedRows::FixedRows(long bits, const __mpfr_struct* data, const std::vector<int64_t>& row_base,
                     const std::vector<int64_t>& offsets, bool binades)
    : FixedRows(bits, row_base.size(), static_cast<int64_t>(offsets.size())) {
  int n = limbs_of(bits);
  // the operand's significant limbs (a binary64 value read at 128 bits has one) and bits
  std::vector<int> significant(row_base.size(), 1), significant_bits(row_base.size(), 0);
  parallel_chunks(static_cast<int64_t>(row_base.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t offset : offsets) {
        const __mpfr_struct* v = data + row_base[r] + offset;
        if (!mpfr_regular_p(v)) continue;
        int low = 0;
        while (v->_mpfr_d[low] == 0) ++low;
        significant[r] = std::max(significant[r], n - low);
        int m = (n - low) * kLimbBits - __builtin_ctzll(v->_mpfr_d[low]);
        significant_bits[r] = std::max(significant_bits[r], m);
      }
    }
  });
  int m = significant_bits.empty() ? 0 : *std::max_element(significant_bits.begin(), significant_bits.end());
  if (binades && m <= kLimbBits - 8) {
    pack_all_binades(MpfrEntries{data, n}, row_base, offsets, m, false);
    return;
  }
  limbs_ = significant.empty() ? 2 : *std::max_element(significant.begin(), significant.end()) + 1;
  words_.assign(rows_.size() * static_cast<size_t>(count_) * static_cast<size_t>(limbs_ + 1), 0);
  parallel_chunks(static_cast<int64_t>(row_base.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) pack_row(data, row_base[r], offsets, r);
  });
}

template <class Source>
void FixedRows::scan_row(const Source& data, int64_t base, const std::vector<int64_t>& offsets, int64_t r) {
  Row& row = rows_[r];
  bool any = false;
  for (int64_t k = 0; k < count_; ++k) {
    const int64_t i = base + offsets[k];
    if (data.special(i)) row.special = true;
    if (!data.regular(i)) continue;
    row.top = any ? std::max<int64_t>(row.top, data.exponent(i)) : data.exponent(i);
    row.end = k + 1;
    any = true;
  }
}

// W = D·2^(e − h + b·s + T − 64N) (above, T = binade_top_), D's bits all in its top limb
// (m ≤ T − 8): that limb shifted right by 64 − T + (h − e − b·s), h − e − b·s ∈ [0, s),
// dropping only zeros. Each binade's positive entries first, then its negative ones.
template <class Source>
void FixedRows::pack_binades(const Source& data, int64_t base, const std::vector<int64_t>& offsets, int64_t r) {
  scan_row(data, base, offsets, r);
  Row& row = rows_[r];
  if (row.special) return;
  const int s = binade_bits_;
  // below → its binade (below / s), without a division an entry
  std::array<uint8_t, kMaxSpread + 1> binade_of;
  for (int below = 0, b = 0, next_b = s; below <= kMaxSpread; ++below) {
    if (below == next_b) ++b, next_b += s;
    binade_of[static_cast<size_t>(below)] = static_cast<uint8_t>(b);
  }
  std::array<int32_t, 2 * kMaxBuckets> sizes{};  // per binade: positive, negative
  for (int64_t k = 0; k < row.end; ++k) {
    const int64_t i = base + offsets[k];
    if (!data.regular(i)) continue;
    int64_t below = row.top - data.exponent(i);
    if (below > kMaxSpread) {
      row.wide = true;
      return;
    }
    ++sizes[2 * size_t{binade_of[static_cast<size_t>(below)]} + (data.negative(i) ? 1 : 0)];
  }
  std::array<int32_t, 2 * kMaxBuckets> next{};
  Bucket* buckets = buckets_.data() + static_cast<size_t>(r) * kMaxBuckets;
  int32_t at = 0;
  for (size_t b = 0; b < kMaxBuckets; ++b) {
    next[2 * b] = at;
    next[2 * b + 1] = at + sizes[2 * b];
    at += sizes[2 * b] + sizes[2 * b + 1];
    if (sizes[2 * b] + sizes[2 * b + 1] > 0) buckets[row.buckets++] = Bucket{static_cast<int32_t>(b), next[2 * b + 1], at};
  }
  BinadeEntry* entries = entries_.get() + static_cast<size_t>(r) * static_cast<size_t>(count_);
  for (int64_t k = 0; k < row.end; ++k) {
    const int64_t i = base + offsets[k];
    if (!data.regular(i)) continue;
    const int64_t below = row.top - data.exponent(i), b = binade_of[static_cast<size_t>(below)];
    const Limb top = data.top(i);
    const int shift = kLimbBits - binade_top_ + static_cast<int>(below - b * s);
    internal_assert(shift == 0 || (top & ((Limb{1} << shift) - 1)) == 0);
    const bool negative = data.negative(i);
    entries[next[static_cast<size_t>(2 * b + (negative ? 1 : 0))]++] =
        BinadeEntry{top >> shift, k};
  }
}

void FixedRows::pack_row(const __mpfr_struct* data, int64_t base, const std::vector<int64_t>& offsets,
                         int64_t r) {
  scan_row(MpfrEntries{data, limbs_of(bits_)}, base, offsets, r);
  Row& row = rows_[r];
  int n = limbs_of(bits_);
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
  if (x.binades() || w.binades()) {
    if (x.binades() && w.binades()) return false;
    return x.binades() ? dot_binades(w, wr, x, xr, r) : dot_binades(x, xr, w, wr, r);
  }
  const Row& rx = x.rows_[xr];
  const Row& rw = w.rows_[wr];
  if (rx.special || rw.special) return false;
  internal_assert(x.count_ == w.count_ && x.bits_ == w.bits_ && mpfr_get_prec(r) == x.bits_);
  int lx = x.limbs_, lw = w.limbs_, size = lx + lw + 1;
  int64_t terms = std::min(rx.end, rw.end);
  Limb a[2 * kMaxLimbs + 1];
  const Limb* xs = x.words_.data() + static_cast<size_t>(xr) * static_cast<size_t>(x.count_) * (lx + 1);
  const Limb* ws = w.words_.data() + static_cast<size_t>(wr) * static_cast<size_t>(w.count_) * (lw + 1);
  int64_t lsb = rx.top + rw.top - int64_t{kLimbBits} * (lx + lw);
  if (lx == 3 && lw == 3 && terms > 0 && x.bits_ <= 2 * kLimbBits) {
    // the two low limbs left out (accumulate_high_3x3): with the cuts, below 2^67 units of
    // limb 2 a term, 2^60 below the rounding bit at 128 bits or fewer (at more, Ziv's test
    // would refuse every element)
    accumulate_high_3x3(xs, ws, terms, a);
    return round_decided(a, size - 2, lsb + 2 * kLimbBits, ceil_log2(terms) + 69, true, x.bits_, x.emin_,
                         x.emax_, r);
  }
  kAccumulate[static_cast<size_t>((lx - 1) * kMaxLimbs + (lw - 1))](xs, ws, terms, a);
  bool cut = rx.cut || rw.cut;
  int64_t eb = -1;  // the bound on what the cuts lost: below 2^eb units
  if (cut) {
    eb = ceil_log2(terms) + kLimbBits * std::max(rx.cut ? lw : 0, rw.cut ? lx : 0) + 2;
  }
  return round_decided(a, size, lsb, eb, cut, x.bits_, x.emin_, x.emax_, r);
}

// x in rows, w in binades: each binade's terms into its accumulator (LX + 2 limbs, in units of
// 2^(h_x − 64·LX) · 2^(h_w − T − b·s), T = binade_top_), shifted into one window whose bit 0
// weighs 2^(h_x + h_w − 64·LX − T − b_max·s).
template <class BucketSum>
bool FixedRows::finish_binades(const FixedRows& x, int64_t xr, const FixedRows& w, int64_t wr,
                               const BucketSum& bucket_sum, __mpfr_struct* r) {
  const Row& rx = x.rows_[xr];
  const Row& rw = w.rows_[wr];
  if (rx.special || rw.special || rw.wide) return false;
  internal_assert(x.count_ == w.count_ && x.bits_ == w.bits_ && mpfr_get_prec(r) == x.bits_);
  const int lx = x.limbs_, s = w.binade_bits_;
  const Bucket* buckets = w.buckets_.data() + static_cast<size_t>(wr) * kMaxBuckets;
  const int64_t spread = rw.buckets == 0 ? 0 : int64_t{buckets[rw.buckets - 1].b} * s;
  const int size = lx + 3 + static_cast<int>((spread + kLimbBits - 1) / kLimbBits);
  Limb total[2 * kMaxLimbs + 1 + kMaxSpread / kLimbBits] = {};
  internal_assert(size <= static_cast<int>(sizeof total / sizeof total[0]));
  const int64_t terms = rw.buckets == 0 ? 0 : buckets[rw.buckets - 1].end;
  for (int i = 0; i < rw.buckets; ++i) {
    Limb a[kMaxLimbs + 2];
    bucket_sum(i, a);
    add_shifted(total, size, a, lx + 2, spread - int64_t{buckets[i].b} * s);
  }
  const bool cut = rx.cut && terms > 0;
  const int64_t lsb = rx.top + rw.top - int64_t{kLimbBits} * lx - w.binade_top_ - spread;
  const int64_t eb = cut ? ceil_log2(terms) + w.binade_top_ + spread + 2 : -1;
  return round_decided(total, size, lsb, eb, cut, x.bits_, x.emin_, x.emax_, r);
}

bool FixedRows::dot_binades(const FixedRows& x, int64_t xr, const FixedRows& w, int64_t wr, __mpfr_struct* r) {
  const int lx = x.limbs_;
  const Limb* xs = x.words_.data() + static_cast<size_t>(xr) * static_cast<size_t>(x.count_) * (lx + 1);
  const BinadeEntry* entries = w.entries_.get() + static_cast<size_t>(wr) * static_cast<size_t>(w.count_);
  const Bucket* buckets = w.buckets_.data() + static_cast<size_t>(wr) * kMaxBuckets;
  auto sum = [&](int i, Limb* a) {
    const int32_t start = i == 0 ? 0 : buckets[i - 1].end;
    std::fill(a, a + lx + 2, Limb{0});
    const AccumulateBinade accumulate = kAccumulateBinade[static_cast<size_t>(lx - 1)];
    accumulate(xs, entries + start, entries + buckets[i].split, Limb{0}, a);
    accumulate(xs, entries + buckets[i].split, entries + buckets[i].end, ~Limb{0}, a);
  };
  return finish_binades(x, xr, w, wr, sum, r);
}

bool FixedRows::group_ready(const FixedRows& x, const FixedRows& w) {
  if (x.binades() || x.limbs_ != 3 || x.digits_.empty()) return false;
  return w.binades() ? w.binade_top_ == 52 : w.limbs_ == 3 && !w.broadcast_ends_.empty() && x.bits_ <= 2 * kLimbBits;
}

void FixedRows::prepare_digits() {
  if (binades() || limbs_ != 3 || !has_ifma()) return;
  const int64_t groups = (static_cast<int64_t>(rows_.size()) + kGroup - 1) / kGroup;
  digits_.assign(static_cast<size_t>(groups * count_ * 4 * kGroup), 0);
  parallel_chunks(groups * count_, 64, [&](int64_t begin, int64_t end) {
    for (int64_t gk = begin; gk < end; ++gk) {
      const int64_t g = gk / count_, k = gk % count_;
      for (int64_t j = 0; j < kGroup; ++j) {
        Limb u[4] = {0, 0, 0, 1};  // U = ±X + 2^192 (a missing row: X = 0)
        if (g * kGroup + j < static_cast<int64_t>(rows_.size())) {
          const Limb* xk = words_.data() + (static_cast<size_t>(g * kGroup + j) * static_cast<size_t>(count_) + k) * 4;
          if (xk[0] == 0) {
            u[0] = xk[1], u[1] = xk[2], u[2] = xk[3];
          } else {
            const Limb neg[4] = {xk[1], xk[2], xk[3], 0};
            limbs::subtract(u, neg, 4);
          }
        }
        uint64_t d[4];
        digits_52(u, d);
        for (int c = 0; c < 4; ++c) digits_[static_cast<size_t>((gk * 4 + c) * kGroup + j)] = d[c];
      }
    }
  });
}

void FixedRows::prepare_row_groups(FixedRows& grouped, FixedRows& broadcast) {
  if (grouped.binades() || broadcast.binades() || grouped.limbs_ != 3 || broadcast.limbs_ != 3 ||
      grouped.bits_ > 2 * kLimbBits || !has_ifma()) {
    return;
  }
  grouped.prepare_digits();
  broadcast.prepare_broadcast();
}

// Each row's nonzero entries, positive ones first, each part by k.
void FixedRows::prepare_broadcast() {
  broadcast_.resize(rows_.size() * static_cast<size_t>(count_));
  broadcast_ends_.assign(rows_.size(), {0, 0});
  parallel_chunks(static_cast<int64_t>(rows_.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const Limb* ws = words_.data() + static_cast<size_t>(r) * static_cast<size_t>(count_) * 4;
      DigitEntry* out = broadcast_.data() + static_cast<size_t>(r) * static_cast<size_t>(count_);
      int64_t n = 0;
      for (const Limb sign : {Limb{0}, ~Limb{0}}) {
        broadcast_ends_[static_cast<size_t>(r)].first = n;  // the positive entries' end, once they are in
        for (int64_t k = 0; k < rows_[r].end; ++k) {
          const Limb* wk = ws + k * 4;
          if (wk[0] != sign || (wk[1] | wk[2] | wk[3]) == 0) continue;
          const Limb magnitude[4] = {wk[1], wk[2], wk[3], 0};
          digits_52(magnitude, out[n].digit);
          out[n++].k = k;
        }
      }
      broadcast_ends_[static_cast<size_t>(r)].second = n;
    }
  });
}

void FixedRows::dot_group(const FixedRows& x, int64_t group, const FixedRows& w, int64_t wr,
                          __mpfr_struct* const* r, bool* decided) {
  internal_assert(group_ready(x, w));
  if (w.binades()) {
    dot_group_binades(x, group, w, wr, r, decided);
  } else {
    dot_group_rows(x, group, w, wr, r, decided);
  }
}

void FixedRows::dot_group_binades(const FixedRows& x, int64_t group, const FixedRows& w, int64_t wr,
                                  __mpfr_struct* const* r, bool* decided) {
  const Row& rw = w.rows_[wr];
  const BinadeEntry* entries = w.entries_.get() + static_cast<size_t>(wr) * static_cast<size_t>(w.count_);
  const Bucket* buckets = w.buckets_.data() + static_cast<size_t>(wr) * kMaxBuckets;
  const uint64_t* digits = x.digits_.data() + static_cast<size_t>(group * x.count_ * 4 * kGroup);
  std::array<std::array<Limb, 5>, kMaxBuckets * kGroup> sums;
  if (!rw.special && !rw.wide) {
    for (int i = 0; i < rw.buckets; ++i) {
      const int32_t start = i == 0 ? 0 : buckets[i - 1].end;
      ifma_bucket_sums(digits, entries + start, entries + buckets[i].split, entries + buckets[i].end,
                       &sums[static_cast<size_t>(i * kGroup)]);
    }
  }
  for (int64_t j = 0; j < kGroup; ++j) {
    const int64_t xr = group * kGroup + j;
    if (xr >= static_cast<int64_t>(x.rows_.size()) || r[j] == nullptr) continue;
    auto sum = [&](int i, Limb* a) {
      const std::array<Limb, 5>& lane = sums[static_cast<size_t>(i * kGroup + j)];
      std::copy(lane.begin(), lane.end(), a);
    };
    decided[j] = finish_binades(x, xr, w, wr, sum, r[j]);
  }
}

// Both in rows of 3 limbs (≤ 128 bits): ifma_row_sums over w's entries below the group's
// longest row gives row j the window of dot's general case (7 limbs, bit 0 at 2^lsb) less
// Σ ±δ_k, 0 ≤ δ_k < 2^159 over k < min(end_x, end_w) (0 past x's end: X = 0). With a cut, each
// term's part is also below 2·2^192 + 1, so the distance to the exact sum is below
// terms·(2^193 + 1 + 2^159) < 2^(⌈log₂ terms⌉ + 194); with none, below 2^(⌈log₂ terms⌉ + 159).
// Never exact (no δ is known to be 0): a zero sum and the boundaries go to ExactDot.
void FixedRows::dot_group_rows(const FixedRows& x, int64_t group, const FixedRows& w, int64_t wr,
                               __mpfr_struct* const* r, bool* decided) {
  internal_assert(x.count_ == w.count_ && x.bits_ == w.bits_);
  const Row& rw = w.rows_[wr];
  auto present = [&](int64_t j) { return group * kGroup + j < x.row_count() && r[j] != nullptr; };
  int64_t limit = 0;  // entries from here on are zeros of every row
  for (int64_t j = 0; j < kGroup; ++j) {
    if (present(j)) limit = std::max(limit, std::min(x.rows_[group * kGroup + j].end, rw.end));
  }
  std::array<std::array<Limb, 7>, kGroup> sums;
  if (!rw.special && limit > 0) {
    const DigitEntry* entries = w.broadcast_.data() + static_cast<size_t>(wr) * static_cast<size_t>(w.count_);
    const auto [split, end] = w.broadcast_ends_[static_cast<size_t>(wr)];
    auto below = [&](const DigitEntry* first, const DigitEntry* last) {  // each part sorted by k
      return std::lower_bound(first, last, limit, [](const DigitEntry& e, int64_t k) { return e.k < k; });
    };
    ifma_row_sums(x.digits_.data() + static_cast<size_t>(group * x.count_ * 4 * kGroup), entries,
                  below(entries, entries + split), entries + split, below(entries + split, entries + end), sums.data());
  }
  for (int64_t j = 0; j < kGroup; ++j) {
    if (!present(j)) continue;
    const int64_t xr = group * kGroup + j;
    const Row& rx = x.rows_[xr];
    const int64_t terms = std::min(rx.end, rw.end);
    if (rx.special || rw.special || terms == 0) {
      decided[j] = dot(x, xr, w, wr, r[j]);
      continue;
    }
    internal_assert(mpfr_get_prec(r[j]) == x.bits_);
    const int64_t eb = ceil_log2(terms) + (rx.cut || rw.cut ? 194 : 159);
    decided[j] = round_decided(sums[static_cast<size_t>(j)].data(), 7, rx.top + rw.top - 6 * int64_t{kLimbBits}, eb,
                               true, x.bits_, x.emin_, x.emax_, r[j]);
  }
}

}  // namespace presk::reference
