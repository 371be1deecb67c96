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
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <vector>

namespace presk::reference {

class FixedRows {
 public:
  // Rows r < `rows` of `count` numbers of precision `bits`, entry (r, k) at
  // data[row_base[r] + offsets[k]]. Packs the rows in parallel (oneTBB, the caller's arena).
  FixedRows(long bits, const __mpfr_struct* data, const std::vector<int64_t>& row_base,
            const std::vector<int64_t>& offsets);

  // Whether the fixed point applies at this precision (≤ 256 bits); above it, use ExactDot.
  static bool supports(long bits) { return bits <= 256; }

  // r ← ∘(Σ_k x(xr, k)·w(wr, k)) at r's precision (= bits) when the integer sum decides it;
  // false (r untouched) when it does not: a NaN or infinite entry, a cancellation or a
  // rounding boundary too close to call, or a result near MPFR's exponent limits.
  static bool dot(const FixedRows& x, int64_t xr, const FixedRows& w, int64_t wr,
                  __mpfr_struct* r);

  int limbs() const { return limbs_; }
  int64_t count() const { return count_; }

 private:
  struct Row {
    int64_t top = 0;       // h: every |entry| < 2^h (0 for a row of zeros)
    int64_t end = 0;       // 1 + the last nonzero entry's index
    bool cut = false;      // an entry lost bits to the alignment
    bool special = false;  // a NaN or infinite entry
  };
  void pack_row(const __mpfr_struct* data, int64_t base, const std::vector<int64_t>& offsets,
                int64_t r);

  long bits_;
  int64_t emin_, emax_;  // MPFR's exponent range (the constructing thread's)
  int limbs_ = 1;       // L
  int64_t count_ = 0;   // K
  std::vector<Row> rows_;
  std::vector<uint64_t> words_;  // per row, per entry: the sign mask (0 or ~0), then L limbs
};

}  // namespace presk::reference
