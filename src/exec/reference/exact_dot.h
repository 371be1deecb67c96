// The exact contraction of the MPFR arithmetic: one output element Σ xᵢ·yᵢ computed exactly
// and rounded once to nearest (ties to even) at the result's precision — the correctly rounded
// dot product, what mpfr_dot computes, several times faster than a chain of fused
// multiply–adds. Each product of two p-bit numbers is exact in 2p bits; the products are added
// as integers into one fixed-point window of limbs (two's complement) that spans the exponents
// present, and the window is rounded once. A sum of zeros is +0, as the fma chain from +0 gives.
// An element with an infinite or NaN operand, products whose exponents span more than
// kExactDotMaxSpan bits, a result that could leave MPFR's exponent range or a precision above
// kExactDotMaxBits is handed to mpfr_dot itself (same definition, slower).
//
// Use: for each output element, scan() every run of its terms, then add() the same runs, then
// finish(r). One object per thread; it keeps its buffers between elements.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <vector>

namespace presk::reference {

// How the MPFR reference sums a contraction output element (docs/reference.md): Exact — the
// exact sum of the exact products, rounded once (fixed_dot.h, then this file); MpfrDot — the
// same number, each element by mpfr_dot (slow; for comparisons); FmaChain — term by term from
// +0, r ← ∘(xᵢ·yᵢ + r) (exact_fma.h), the definition before issue #37.
enum class ContractionSums { Exact, MpfrDot, FmaChain };

// The definition this process's MPFR runs use (Exact unless set; `presk run --contraction`
// sets it before it runs anything). It is read once per contraction.
ContractionSums contraction_sums();
void set_contraction_sums(ContractionSums sums);

// Precisions up to this many bits take the window; larger ones use mpfr_dot.
constexpr long kExactDotMaxBits = 16 * 64;
// The widest spread of product exponents the window takes, in bits.
constexpr int64_t kExactDotMaxSpan = 64 * 64;

class ExactDot {
 public:
  explicit ExactDot(long bits);

  // Pass 1: notes the exponents and special values of the terms xₖ·yₖ, k < count (strides in
  // numbers). Every number has precision `bits`.
  void scan(const __mpfr_struct* x, int64_t x_stride, const __mpfr_struct* y, int64_t y_stride,
            int64_t count);
  // Pass 2: the same runs as pass 1 (in any order): adds their products exactly.
  void add(const __mpfr_struct* x, int64_t x_stride, const __mpfr_struct* y, int64_t y_stride,
           int64_t count);
  // r ← ∘(Σ xᵢ·yᵢ) at r's precision (= bits), +0 for an exact zero; empties the object for
  // the next element.
  void finish(__mpfr_struct* r);

 private:
  enum class Mode { Scanning, Window, Collect };
  void choose_mode();

  long bits_;
  int limbs_;                       // N = ⌈bits/64⌉
  int64_t emin_, emax_;             // MPFR's exponent range (this thread's, when constructed)
  Mode mode_ = Mode::Scanning;
  bool special_ = false;            // a NaN or infinite operand
  bool any_ = false;                // a nonzero product
  int64_t e_min_ = 0, e_max_ = 0;   // least and greatest ex + ey of the nonzero products
  std::vector<uint64_t> window_;    // two's complement; bit 0 weighs 2^(e_min − 2·64N)
  int window_limbs_ = 0;
  std::vector<mpfr_ptr> xs_, ys_;   // the terms, for mpfr_dot (Collect)
};

}  // namespace presk::reference
