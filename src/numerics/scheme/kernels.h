// The native side of the contract's meaning (docs/chip.md, "Native kernels"): quantizing binary32
// values into a scheme's int8 words and keeping rows as int8 codes, with binary64 and integer
// arithmetic that gives the exact meaning's bits (meaning.h); int8 × int8 (and u8 × int8) dot
// products accumulated in 32-bit integers — the scalar chain is the definition and the Highway
// SIMD path (every compiled target) gives the same bits, since integer sums wrap alike in any
// order; an accumulator of fewer bits emulated as a chip runs it (wrapping or saturating).
#pragma once

#include <cstdint>
#include <vector>

#include "numerics/scheme/contract.h"

namespace presk::numerics {

// A block's quantized form as a chip holds it: the scale and, per word, one byte per value (the
// first word read unsigned under an unsigned scale, every other word read as int8).
struct NativeBlock {
  double scale = 0;
  std::vector<std::vector<uint8_t>> words;
  std::vector<double> values;  // Σ_w code·step_w·s, exact in binary64

  int32_t code(size_t word, size_t i, bool is_unsigned) const {
    return word == 0 && is_unsigned ? words[0][i] : static_cast<int8_t>(words[word][i]);
  }
};

// The scale of a block whose largest magnitude is `largest` (≥ 0).
double native_scale(double largest, const Scale& scale);

// One block of n binary32 values in `scheme`; or of binary64 values (an attention's weights,
// products of 48 bits), whose residuals stay exact too: a y with a nonzero code has |y| ≥ s/2,
// so y and q·s are multiples of 2^(e − 54) (s < 2^e, s a binary32 or fewer bits) and
// |y − q·s| ≤ s/2 < 2^(e − 1) holds in 53 bits; each further word's step is s/128^w.
NativeBlock quantize_block_native(const float* x, size_t n, const Scheme& scheme);
NativeBlock quantize_block_native(const double* x, size_t n, const Scheme& scheme);

// A row kept as int8 codes under one binary16 scale (the Walsh–Hadamard transform of the row
// first, in binary64 butterflies, where rotated): the codes and what the chip reads back.
// The forward transform's sums are exact while the row's values span fewer than 29 − log2(n)
// binades (then the bits are the meaning's); the way back is integer arithmetic, always exact.
struct NativeKeptRow {
  double scale = 0;
  std::vector<int8_t> codes;
  std::vector<double> values;
};
NativeKeptRow keep_row_native(const float* x, size_t n, bool rotated);

// H_n·v in place (Sylvester's order, n a power of two): binary64 butterflies a ± b, and the
// integer form (exact while |H·v| < 2^31).
void walsh_hadamard(double* v, size_t n);
void walsh_hadamard(int32_t* v, size_t n);

// Σ a_i·b_i in a 32-bit integer (wrapping past 2^31, as two's complement does). `simd` false:
// the scalar chain, the definition; true: the Highway kernel on the best compiled target.
int32_t dot_i8(const int8_t* a, const int8_t* b, size_t n, bool simd);
int32_t dot_u8i8(const uint8_t* a, const int8_t* b, size_t n, bool simd);

// The Highway target the SIMD dot runs on now (for tests that run every target).
int64_t dot_target();

// Σ a_i·b_i, i ascending, in an accumulator of `bits` bits (1 … 64): each partial sum wrapped
// into [−2^(bits−1), 2^(bits−1)) or saturated at its ends, as a chip of that width computes it.
int64_t dot_i8_accumulated(const int8_t* a, const int8_t* b, size_t n, int bits, Overflow overflow);
// The same for codes held as 32-bit integers (unsigned bytes, int4 weights, 16-bit codes).
int64_t dot_accumulated(const int32_t* a, const int32_t* b, size_t n, int bits, Overflow overflow);

// Σ a_i·b_i of codes (a: int8, or unsigned bytes where `a_unsigned`) as a chip whose accumulator
// has `bits` bits sums them, i ascending: wrapped, the exact sum taken modulo 2^bits (each partial
// sum wrapped gives the same), by dot_i8/dot_u8i8 (`simd`: the Highway kernel) on runs short
// enough that 32 bits hold them exactly; saturated, the same where no partial sum can reach the
// accumulator's ends (n·max|a|·128 within it), else the chain, each partial sum saturated.
// `overflowed` (may be null) is set when the result is not the exact sum.
int64_t dot_codes(const uint8_t* a, bool a_unsigned, const int8_t* b, size_t n, int bits, Overflow overflow, bool simd,
                  bool* overflowed);

// One output of a product of integer codes as a chip computes it (docs/chip.md, "The chip's
// products"): the activation's row of k values in `words` int8 words (word w's codes at
// words[w], the first unsigned where the scheme's scale is), one scale per block of `block`
// values; the weights' column of k int8 codes (int4 codes are int8 too), one f32 scale per group
// of `group` codes. Over runs of min(block, group) terms (one divides the other, both divide k),
// and per word: the run's codes dotted in the accumulator (dot_codes), times the word's step
// (2^−7 or 2^−8 a word), the block's scale and the group's scale, added in binary64 in that
// order: y += ((sum·step)·s_a)·s_w.
struct CodesRow {
  const uint8_t* words[3] = {nullptr, nullptr, nullptr};
  const double* scales = nullptr;
  size_t block = 0;
};
struct CodesColumn {
  const int8_t* codes = nullptr;
  const float* scales = nullptr;
  size_t group = 0;
};
double chip_dot(const CodesRow& a, const CodesColumn& w, size_t k, const Scheme& scheme, int bits, Overflow overflow,
                bool simd, bool* overflowed);

// One output of an attention's product as the chip computes it (docs/chip.md, "Attention"): a
// row `a` in the scheme's words (one scale per block of a.block) against a column of int8 codes
// `b` (a key row, or a value column's codes) with one scale per block of b.block — or none, every
// scale 1, for codes whose scales the row carries (the weights times the value rows' scales).
// Over runs of min(a.block, b.block) terms (one divides the other, both divide k): the run's
// words dotted with b's codes in the accumulator (dot_codes) and combined exactly,
// sum = Σ_w dot_w·2^(shift·(W−1−w)), then y += (sum·2^(−shift·(W−1)))·(s_a·s_b) in binary64, the
// scales' product exact (binary32 scales: 48 significant bits at most) — so where the sums do
// not overflow, one run gives the exact sum's nearest binary64: the meaning's bits.
struct ScaledColumn {
  const int8_t* codes = nullptr;
  const double* scales = nullptr;  // null: every scale 1
  size_t block = 0;
};
double attention_dot(const CodesRow& a, const ScaledColumn& b, size_t k, const Scheme& scheme, int bits, Overflow overflow,
                     bool simd, bool* overflowed);

// A block's words dotted with int8 weights b (n values): Σ_i value_i·b_i = s·sum/2^shift, with
// the words' integer dot products combined exactly (sum = Σ_w dot_w·2^(shift − shift_w)).
struct WordsDot {
  int64_t sum = 0;
  int shift = 0;  // one: 0; two_rest: 7; two_code16: 8; three: 14
};
WordsDot dot_words(const NativeBlock& block, const Scheme& scheme, const int8_t* b, size_t n, bool simd);

}  // namespace presk::numerics
