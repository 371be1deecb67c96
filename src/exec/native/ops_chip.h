// A chip's integer sums in the native executor (docs/chip.md, "The chip's products"): a
// `quantize` let of a chip's program keeps its codes beside its values (ActivationCodes, in the
// value's Storage, so the views that share the storage — a reshape, a contiguous slice — carry
// them), and a contraction of such an activation by integer weights computes each output as the
// chip does (numerics::chip_dot): the codes' int8 × int8 sums in the realization's accumulator
// (IntegerSums), each times its scales, added in binary64, then rounded once into the site's
// type. Each output from its own row and column alone: the same bits at any thread count, and on
// every SIMD target (the integer sums are exact, or wrapped alike).
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
};

// The product of `a` (letters a_letters) by `b` (b_letters), summed over the one letter `k`, as
// the chip computes it, in [M…, N] order (A's other letters, then B's) — where the realization
// has integer sums, `a` holds a quantize's codes, its rows (K last) lie whole in its blocks, and
// `b` is integer weights, a matrix whose scales run along K (one per column, or per group
// nesting with the activation's blocks). None otherwise: the contraction computes on the values.
std::optional<std::vector<double>> chip_product(const std::string& a_letters, const std::string& b_letters,
                                                const std::string& k, const std::string& batch, const Value& a,
                                                const Value& b, const OpContext& ctx);

// A chip's binary64 output rounded once into a site's compute type (bf16: to bf16, held in f32).
float chip_output_in(double y, RealType site);

}  // namespace presk::exec::native
