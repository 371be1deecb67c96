// An attention's weighted sum of value rows as a chip computes it where the values are kept as
// int8 rows (AttentionNumerics; docs/chip.md, "Attention"): each weight is taken times its value
// row's scale, t_j = p_j·s_j, in the contract's form for weights — a float format, or quantized
// in a scheme over tiles of keys (a query's weights over a tile) — and the output is
// out[d] = Σ_j t̂_j·c_j[d] over the rows' codes c_j. And the scores q·k_j with the queries and the
// keys each taken in its form (a float format, or a scheme over blocks of the row).
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
// tiles added in binary64 (one tile: the exact meaning's bits) — attention_dot (kernels.h), as
// the native executor computes the weighted sum. Weights are binary32 values.
std::vector<double> attend_values_native(const std::vector<float>& weights, const std::vector<KeptRow>& rows,
                                         const Scheme& scheme);

// The scores of one query against key rows as the chip takes them (AttentionNumerics: its
// queries, its keys): score_j = Σ_d q̂[d]·k̂_j[d], the query row and each key row taken in its
// form — each value rounded to a float format, or the row quantized in a scheme over blocks of
// its values (Block::row and Block::format: the whole row, a head's queries or a cached key row;
// a fixed count must divide the row). The meaning: the exact sum rounded once to binary64.
std::vector<double> attend_scores_exact(const std::vector<double>& query, const std::vector<std::vector<double>>& keys,
                                        const Taken& queries, const Taken& keys_taken);

// The chip's integer form, for queries in a scheme of any words and keys in a one-word scheme of
// signed codes, with blocks that nest: per block, the query's words dotted with the key's
// int8 codes in 32-bit integers and combined exactly (sum·2^−shift), times the product
// of the two scales (exact in binary64: each has at most 24 significant bits), blocks added in
// binary64 (one block: the meaning's bits) — attention_dot (kernels.h), as the native executor
// computes the scores. Queries and keys are binary32 values.
std::vector<double> attend_scores_native(const std::vector<float>& query, const std::vector<std::vector<float>>& keys,
                                         const Scheme& queries, const Scheme& keys_scheme);

}  // namespace presk::numerics
