// An attention's operands in their forms as the IR's `quantize` carries them (docs/chip.md,
// "Attention in the executors"): a value taken in a float format or a scheme; a value row's codes
// in units of its scale; and a softmax's weights each taken times its value row's scale.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numerics/scheme/contract.h"

namespace presk::numerics {

// The spec of a one-operand quantize that takes each value as `taken` says: a scheme's
// "scale/words" (its block the quantize's starts[0]), or "keep/<format>" for a float format (each
// value rounded to its nearest).
std::string taken_spec(const Taken& taken);

// spec "codes/<scale>/<words>", starts = {n}: each block of n values (a value row) quantized in
// the scheme, and each value replaced by its words in units of the block's scale — q₁, q₁ + q₂/128,
// c/256, q₁ + q₂/128 + q₃/16384 — so the value the scheme stands for is the scale times it (0 in a
// block whose scale is 0; NaN where the scale is +∞). None for a spec that is no codes spec;
// E1722 for a malformed one.
std::string codes_spec(const Scheme& values);
std::optional<Scheme> codes_of_spec(std::string_view spec, const std::vector<int64_t>& starts);
// The value of a block's words in units of its scale (the codes spec's value of element i).
double codes_value(const std::vector<std::vector<int32_t>>& words, size_t i, Words kind);

// quantize(p, v) with spec "weights|<form>|<values scale/words>|<p letters>,<v letters>" and
// starts = {tile}: the weighted sum Σ_j p_j·v_j's weights as the chip takes them where the values
// are quantized — each weight times the scale of the value row it multiplies (the values' scheme
// over each whole row of v, its last axis), t_j = p_j·s_j exactly, then in the weights' form: a
// scheme over tiles of `tile` keys along p's last axis, or rounded to a float format ("f32",
// "bf16", "f16"). The letters are the weighted sum's own (its contraction's spec): each of v's
// letters but its last names an axis of p.
struct WeightsForm {
  Taken weights;                 // a scheme's block: a fixed count, the tile
  Scheme values;                 // its block: the row (informational)
  std::string weight_letters;    // p's
  std::string value_letters;     // v's
};
std::string weights_spec(const WeightsForm& form);
// None for a spec that is no weights spec; E1722 for a malformed one.
std::optional<WeightsForm> weights_of_spec(std::string_view spec, const std::vector<int64_t>& starts);

// For each weight of p (row-major, shape p_shape by its letters), the index of the row of v
// (shape v_shape; a row: its last axis) that it multiplies.
std::vector<size_t> value_row_of_weights(const WeightsForm& form, const std::vector<int64_t>& p_shape,
                                         const std::vector<int64_t>& v_shape);

}  // namespace presk::numerics
