// The exact meaning of every scheme, scale, block and keep mode (docs/chip.md): computed on
// exact rationals (GMP), so each scale is the one rounding the contract states and each code the
// nearest whole number (ties to even) of the exact quotient. The native kernels (kernels.h) are
// checked against these, bit for bit.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <vector>

#include "numerics/scheme/contract.h"

namespace presk::numerics {

// A block's quantized form: its scale, each value's int8 words, and the values they stand for.
struct QuantizedBlock {
  double scale = 0;                          // s (a binary32 number, or m·2^e; ±∞ past binary32)
  std::vector<std::vector<int32_t>> words;   // words[w][i]: word w of value i
  std::vector<double> values;                // Σ_w words[w][i]·step_w·s, exact (NaN when s = ∞)
};

// The scale of a block whose largest magnitude is `largest` (≥ 0), exactly as `scale` says.
double exact_scale(double largest, const Scale& scale);

// One block of n values in `scheme` (the block's extent is the caller's: n values share s):
// binary64 values, or the reference's MPFR numbers (exact, at any precision).
QuantizedBlock quantize_block_exact(const double* x, size_t n, const Scheme& scheme);
QuantizedBlock quantize_block_exact(const __mpfr_struct* x, size_t n, const Scheme& scheme);

// A row of n values cut into blocks of `block` values (block divides n).
std::vector<QuantizedBlock> quantize_row_exact(const double* x, size_t n, size_t block, const Scheme& scheme);

// The values a quantized row stands for, in order.
std::vector<double> dequantized(const std::vector<QuantizedBlock>& blocks);

// A row kept by a chip between steps: the codes (int8 rows: one binary16 scale, codes ⌊y/s⌉ of
// the row y — the row itself, or its Walsh–Hadamard transform H·x where rotated) and the row it
// reads back: for int8 rows s·q; rotated, H·(s·q)/n (H·H = n·I); a float keep: each value
// rounded to the nearest of the format; as computed: the row itself.
struct KeptRow {
  double scale = 0;              // int8 rows: the binary16 scale (±∞ past binary16)
  std::vector<int32_t> codes;    // int8 rows: the codes
  std::vector<double> values;    // what the chip reads back, exact
};
KeptRow keep_row_exact(const double* x, size_t n, const Keep& keep);
// The same for the reference's MPFR numbers (exact at any precision; as_computed: each value's
// nearest binary64).
KeptRow keep_row_exact(const __mpfr_struct* x, size_t n, const Keep& keep);

// x rounded to the nearest number of a float format (ties to even, subnormals, ±∞ beyond).
double round_to_float_format(double x, FloatFormat format);

}  // namespace presk::numerics
