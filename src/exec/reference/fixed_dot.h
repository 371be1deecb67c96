// The fast path of the exact contraction (issue #37): each operand row aligned once to a
// fixed point, so that a dot product is integer multiply–adds with no shift per term, and the
// correctly rounded result is decided from the integer sum and a bound on what the alignment
// cut off (Ziv's test); an element it cannot decide goes to ExactDot (exact_dot.h), which
// computes the same number exactly. The result is the same bits as mpfr_dot's either way.
//
// A row of a p-bit operand (N = ⌈p/64⌉ limbs) with top exponent h (every |x| < 2^h) is held
// as integers X_k = ⌊|x_k|·2^(64L − h)⌋ of L limbs and a sign, L = n + 1 where n ≤ N is the
// operand's significant limbs (1 for binary64 weights read at 128 bits): entries within 64 bits
// of h are exact, smaller ones are cut. Σ ±X_k·W_k is formed exactly in L_x + L_w + 1 limbs
// (two's complement); its distance to the exact sum, in units of 2^(h_x + h_w − 64(L_x + L_w)),
// is below K·(2^(64·L_w)·[x row cut] + 2^(64·L_x)·[w row cut] + 1). With no cut the sum is
// exact and rounded with ties to even; otherwise it is rounded when no rounding boundary lies
// within that bound of it.
//
// Binades (issue #37): an operand whose entries all have at most m ≤ 56 significant bits (a
// binary64, f32 or bf16 weight read at any precision) may be packed instead, each row's entries
// sorted into binades of s = 64 − m exponents below its top h: an entry of exponent e in binade
// b = ⌊(h − e)/s⌋ is the one-limb integer |w|·2^(64 − h + b·s), exact. A term is then LX × 1
// limbs, added into the binade's own accumulator; the accumulators are shifted into one window
// once per element. The other operand's rows stay as above, so the bound on what its cuts lost
// is K·2^(64 + b_max·s) units of that window. The sum is exact, so its order is free.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace presk::reference {

// One entry of a row in binades: its one-limb integer and its index (its sign: which part of
// its binade it is in).
struct BinadeEntry {
  uint64_t w;
  int64_t k;
};

// One nonzero entry of a row of 3 limbs as the 52-bit digits of its magnitude W =
// Σ_c digit[c]·2^(52c) (W < 2^192), and its index.
struct DigitEntry {
  uint64_t digit[4];
  int64_t k;
};

// Whether this CPU runs the 52-bit multiply–adds of AVX-512 IFMA (fixed_dot_ifma.cpp).
bool has_ifma();

class FixedRows {
 public:
  // Rows r < `rows` of `count` numbers of precision `bits`, entry (r, k) at
  // data[row_base[r] + offsets[k]]. Packs the rows in parallel (oneTBB, the caller's arena).
  // With `binades`, an operand whose entries fit (above) is packed in binades.
  FixedRows(long bits, const __mpfr_struct* data, const std::vector<int64_t>& row_base,
            const std::vector<int64_t>& offsets, bool binades = false);
  // The same rows of binary64 values (exact: a parameter read where it is stored, in its own
  // type), in binades, the entries the rows of those values as MPFR numbers would have.
  FixedRows(long bits, const double* data, const std::vector<int64_t>& row_base,
            const std::vector<int64_t>& offsets);

  // Whether the fixed point applies at this precision (≤ 512 bits); above it, use ExactDot.
  static bool supports(long bits) { return bits <= 512; }

  // r ← ∘(Σ_k x(xr, k)·w(wr, k)) at r's precision (= bits) when the integer sum decides it;
  // false (r untouched) when it does not: a NaN or infinite entry, a cancellation or a
  // rounding boundary too close to call, a result near MPFR's exponent limits, a row in binades
  // spread over more than kMaxSpread bits, or both operands in binades.
  static bool dot(const FixedRows& x, int64_t xr, const FixedRows& w, int64_t wr,
                  __mpfr_struct* r);

  // Eight rows at once (IFMA): x's rows 8·group + j (j < 8, those that exist and whose r[j]
  // is not null) against w's row wr, r[j] and decided[j] as dot's (w in binades: the same
  // integers as dot's; w in rows: the sum of dot_group_rows, its own bound). Applies where
  // group_ready(x, w).
  static constexpr int kGroup = 8;
  static bool group_ready(const FixedRows& x, const FixedRows& w);
  static void dot_group(const FixedRows& x, int64_t group, const FixedRows& w, int64_t wr,
                        __mpfr_struct* const* r, bool* decided);
  // x's rows as 52-bit digits, kGroup rows side by side (for dot_group; x in rows of 3 limbs).
  void prepare_digits();
  // For dot_group(grouped, …, broadcast, …) where both are in rows of 3 limbs at ≤ 128 bits
  // (the attention's contractions) and the CPU has IFMA: grouped's digits (prepare_digits) and
  // broadcast's rows as DigitEntry lists (positive entries, then negative ones). Nothing
  // elsewhere. The sum is symmetric: either operand of a contraction may be `grouped`.
  static void prepare_row_groups(FixedRows& grouped, FixedRows& broadcast);

  int limbs() const { return limbs_; }
  int64_t row_count() const { return static_cast<int64_t>(rows_.size()); }
  bool binades() const { return binade_bits_ > 0; }
  int64_t count() const { return count_; }

 private:
  struct Row {
    int64_t top = 0;       // h: every |entry| < 2^h (0 for a row of zeros)
    int64_t end = 0;       // 1 + the last nonzero entry's index
    bool cut = false;      // an entry lost bits to the alignment
    bool special = false;  // a NaN or infinite entry
    bool wide = false;     // binades: an entry lies more than kMaxSpread bits below h
    int buckets = 0;       // binades: the row's nonempty binades
  };
  // A row's nonempty binade: its index b, the end of its positive entries and of all its
  // entries (each part sorted by k).
  struct Bucket {
    int32_t b;
    int32_t split;
    int32_t end;
  };
  static constexpr int kMaxSpread = 384;   // bits below h a row in binades may reach
  static constexpr int kMaxBuckets = 49;   // kMaxSpread / 8 + 1 (s ≥ 8)

  FixedRows(long bits, size_t rows, int64_t count);
  // Source: an operand's entries (fixed_dot.cpp: MPFR numbers or binary64 values).
  template <class Source>
  void scan_row(const Source& data, int64_t base, const std::vector<int64_t>& offsets, int64_t r);
  void pack_row(const __mpfr_struct* data, int64_t base, const std::vector<int64_t>& offsets,
                int64_t r);
  // Every row in binades, m the entries' most significant bits (≤ 56; narrow: ≤ 44, each W
  // below 2^52 for IFMA).
  template <class Source>
  void pack_all_binades(const Source& data, const std::vector<int64_t>& row_base,
                        const std::vector<int64_t>& offsets, int m, bool narrow);
  template <class Source>
  void pack_binades(const Source& data, int64_t base, const std::vector<int64_t>& offsets, int64_t r);
  static bool dot_binades(const FixedRows& x, int64_t xr, const FixedRows& w, int64_t wr,
                          __mpfr_struct* r);
  // The window of dot_binades: each bucket's sum a (LX + 2 limbs) added by add_bucket(i, a).
  template <class BucketSum>
  static bool finish_binades(const FixedRows& x, int64_t xr, const FixedRows& w, int64_t wr,
                             const BucketSum& bucket_sum, __mpfr_struct* r);
  void prepare_broadcast();
  static void dot_group_binades(const FixedRows& x, int64_t group, const FixedRows& w, int64_t wr,
                                __mpfr_struct* const* r, bool* decided);
  static void dot_group_rows(const FixedRows& x, int64_t group, const FixedRows& w, int64_t wr,
                             __mpfr_struct* const* r, bool* decided);

  long bits_;
  int64_t emin_, emax_;  // MPFR's exponent range (the constructing thread's)
  int limbs_ = 1;       // L
  int64_t count_ = 0;   // K
  std::vector<Row> rows_;
  std::vector<uint64_t> words_;  // per row, per entry: the sign mask (0 or ~0), then L limbs
  int binade_bits_ = 0;          // s, or 0 when the rows are not in binades
  int binade_top_ = 64;          // the top binade's W < 2^binade_top_ (52: IFMA's operands)
  std::vector<uint64_t> digits_; // prepare_digits: [group][k][digit 0…3][row j], U = ±X + 2^192
  std::vector<DigitEntry> broadcast_;  // prepare_broadcast: per row, K slots, positive entries (by k), then negative ones
  std::vector<std::pair<int64_t, int64_t>> broadcast_ends_;  // per row: the end of its positive entries, of all
  std::unique_ptr<BinadeEntry[]> entries_;  // binades: per row, K slots, grouped by binade (unset past them)
  std::vector<Bucket> buckets_;       // binades: per row, kMaxBuckets slots
};

}  // namespace presk::reference
