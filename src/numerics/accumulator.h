// holds_accumulator (the seed's function; docs/chip.md, "Accumulators"): whether a chip whose
// integers accumulate in `bits` bits holds every partial result a product of integer codes
// accumulates — from proven ranges: the stored integer weights' actual codes, the activation
// codes' range from their scheme, the number of terms summed in integers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "exec/native/kernels.h"
#include "numerics/scheme/contract.h"

namespace presk::numerics {

// What bounds the partial sums of Σ_i a_i·w_i over one run of integer terms.
struct AccumulatedOperands {
  std::optional<int64_t> activation_largest;  // the largest |a_i| (none: no range bounds it)
  std::optional<int64_t> weight_largest;      // the largest |w_i| (none: no range bounds it)
  // The largest Σ_i |w_i| over one run of any output (tighter than terms · weight_largest).
  std::optional<int64_t> weight_run_l1;
  int64_t terms = 0;  // the terms summed in integers before a scale is applied
};

struct AccumulatorCheck {
  bool holds = false;
  int bits_needed = 0;  // the width the proven range needs (0 when no range bounds an operand)
  std::string reason;   // why it does not hold; empty when it does
};

// Every partial sum lies within ±activation_largest·min(weight_run_l1, terms·weight_largest);
// a signed accumulator of b bits holds ±(2^(b−1) − 1). An operand no range bounds holds only on
// a chip of the language's own 64-bit integers.
AccumulatorCheck holds_accumulator(const AccumulatedOperands& operands, int bits);

// The operands of a product of activations in `scheme`'s word `word` by stored integer weights
// `weights` (contracted along their `over` axis), summed in integers over runs of `run` terms
// (the activation's block and the weights' group, whichever is shorter; run divides the axis).
AccumulatedOperands operands_of(const exec::native::QuantizedWeights& weights, const Scheme& scheme, int word,
                                int64_t run);

// The operands of an attention's product on codes (docs/chip.md, "The chip's products"): word
// `word` of a row in `scheme` (the queries, or the weights) against int8 codes of at most 127
// (the keys, or the values' codes), summed in integers over runs of `run` terms.
AccumulatedOperands operands_of_codes(const Scheme& scheme, int word, int64_t run);

}  // namespace presk::numerics
