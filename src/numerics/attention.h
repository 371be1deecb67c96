// An attention's weighted sum of value rows as a chip computes it where the values are kept as
// int8 rows (AttentionNumerics; docs/chip.md, "Attention"): each weight is taken times its value
// row's scale, t_j = p_j·s_j, in the contract's form for weights — a float format, or quantized
// in a scheme over tiles of keys (a query's weights over a tile) — and the output is
// out[d] = Σ_j t̂_j·c_j[d] over the rows' codes c_j.
#pragma once

#include <cstdint>
#include <vector>

#include "numerics/scheme/contract.h"
#include "numerics/scheme/meaning.h"

namespace presk::numerics {

// The exact meaning: out[d] rounded once to binary64 from the exact sum. `rows` are the keys'
// value rows as kept (int8_rows: their scale and codes), `tile` the keys per weights' block
// (Block::row: every key).
std::vector<double> attend_values_exact(const std::vector<double>& weights, const std::vector<KeptRow>& rows,
                                        const Taken& taken);

// The chip's integer form, for weights quantized in a one-word scheme: per tile, the codes' sum
// Σ_j q_j·c_j[d] in 32-bit integers (u8 × int8 under an unsigned scale), times the tile's scale,
// tiles added in binary64 (one tile: the exact meaning's bits). Weights are binary32 values.
std::vector<double> attend_values_native(const std::vector<float>& weights, const std::vector<KeptRow>& rows,
                                         const Scheme& scheme);

}  // namespace presk::numerics
