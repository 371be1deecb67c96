// A chip's integer sums in the native executor (docs/chip.md, "The chip's products"): a
// `quantize` let of a chip's program keeps its codes beside its values (ActivationCodes, in the
// value's Storage, so the views that share the storage — a reshape, a contiguous slice — carry
// them, and a transpose of the whole result names them in their own order), and a contraction
// of such an activation computes each output as the chip does: by integer weights,
// numerics::chip_dot; by another quantized activation — an attention's keys, or its values'
// codes under weights taken times their scales — numerics::attention_dot (the meaning's bits
// where one block or tile spans the row). The codes' int8 × int8 sums in the realization's
// accumulator (IntegerSums), each times its scales, added in binary64, then rounded once into
// the site's type. Each output from its own row and column alone: the same bits at any thread
// count, and on every SIMD target (the integer sums are exact, or wrapped alike).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exec/native/ops.h"
#include "numerics/scheme/contract.h"

namespace presk::exec::native {

struct ActivationCodes {
  numerics::Scheme scheme;                  // its block: `block` values along the last axis
  size_t block = 0;
  std::vector<std::vector<uint8_t>> words;  // per word, one byte per element (the storage's index)
  std::vector<double> scales;               // one per block of elements
  std::vector<int64_t> shape;               // the quantize's result's
  // The values are the codes themselves, in units of their block's scale (an attention's value
  // rows, spec "codes/…": the weights carry the scales); a product reads them at scale 1.
  bool units = false;
};

// A contraction's letters as the native kernels split them (ops_contract.cpp): A's and B's,
// the batch, M and N letters in the output's order, and the contracted ones.
struct ChipLetters {
  std::string a, b, batch, m, n, k;
};

// The product of `a` by `b`, summed over the one letter k, as the chip computes it, in
// [batch…, M…, N…] order — where the realization has integer sums and `a` holds a quantize's
// codes laid out [batch…, M…, K] (K last, each row within whole blocks, not in units), and `b`
// is either integer weights, a matrix whose scales run along K (one per column, or per group
// nesting with the activation's blocks; no batch), or a quantize's codes in one signed int8
// word: in units, read along any axis, or under scales, along K in whole blocks that nest with
// a's. None otherwise: the contraction computes on the values.
std::optional<std::vector<double>> chip_product(const ChipLetters& letters, const Value& a, const Value& b,
                                                const OpContext& ctx);

// A chip's binary64 output rounded once into a site's compute type (bf16: to bf16, held in f32).
float chip_output_in(double y, RealType site);

}  // namespace presk::exec::native
