// The contract's AttentionNumerics in the chip's program (docs/chip.md, "Attention in the
// executors"): an attention — a softmax of the scores q·kᵀ (through a scale and a causal mask)
// whose weights sum value rows — takes its queries and keys in their forms before the scores, and
// its weights and values in theirs before the weighted sum, as `quantize` lets both executors run:
//  * queries, keys: each row along the contracted axis (a head's width) taken in its form — a
//    float format, each value rounded, or a scheme over blocks of the row;
//  * values in a scheme (over each whole row): the weighted sum reads each row's codes in units of
//    its scale (spec "codes/…"), and the weights each taken times the scale of the row it
//    multiplies, t_j = p_j·s_j, in the weights' form over tiles of keys (quantize(p, v), spec
//    "weights|…"), so that it computes Σ_j t̂_j·c_j — the chip's sum, exactly in the reference;
//  * values in a float format: each value rounded, and the weights taken in their form as they are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "numerics/accumulator.h"
#include "numerics/ir_edit.h"
#include "numerics/scheme/contract.h"

namespace presk::numerics {

struct AttentionSite {
  uint32_t function = 0;
  uint32_t scores = 0;      // the contraction of the queries (operand 0) by the keys (operand 1)
  uint32_t weighted = 0;    // the contraction of the weights by the values
  int weights_operand = 0;  // which of weighted's operands the weights are
  std::string name;         // the scores' site, for messages
};

// Every attention of the program, in function and let order.
std::vector<AttentionSite> attention_sites(const ir::Program& program);

// The values an attention takes in its forms, per evaluation — its queries, keys, values and
// weights, in that order (AttentionNumerics's) — and the rows each is taken by (the contracted
// axis of queries and keys, a value row, a query's weights over every key).
struct AttentionOperands {
  int64_t elements[4] = {0, 0, 0, 0};
  int64_t rows[4] = {0, 0, 0, 0};
};
AttentionOperands attention_operands(const ir::Program& program, const AttentionSite& site);

// Checks the contract's attention forms against the program's attentions: an `attentions` entry
// that names no attention's scores (E1728), a block that does not
// divide a query or key row, or a tile that does not divide the keys (E1711); an unsigned scale
// on queries, keys or values (E1714); values quantized in blocks shorter than their row (E1726);
// a query or key row that reaches its scores through a view something else reads (E1727).
void check_attention(const Contract& contract, const ir::Program& program);

// Whether the contract's accumulator holds an attention's integer sums (holds_accumulator, from
// the forms' code ranges and runs; the widest word where there are several): the scores' where
// its queries and keys are quantized, the weighted sum's where its weights and values are; none
// for a product on the forms' values.
struct AttentionAccumulators {
  std::optional<AccumulatorCheck> scores, weighted;
};
AttentionAccumulators attention_accumulators(const ir::Program& program, const AttentionSite& site,
                                             const AttentionNumerics& forms, const Contract& contract);

// "queries f32, keys row/absmax/one, values …, weights … times the value rows' scales".
std::string forms_text(const AttentionNumerics& forms);

// A table for `presk dump --stage chip`: each attention and the forms it takes its operands in
// (the contract's `attention`, or its own in `attentions`), and the accumulator bits its integer
// sums need.
std::string attention_text(const ir::Program& program, const Contract& contract);

// Adds the quantizes of the forms of each attention of function `function` that has forms to `edit`.
void insert_attention(Edit& edit, const Contract& contract, const std::vector<AttentionSite>& sites, uint32_t function);

}  // namespace presk::numerics
