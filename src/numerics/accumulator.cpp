// holds_accumulator (accumulator.h): the widths proven operand ranges need.
#include "numerics/accumulator.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "support/diagnostics.h"

namespace presk::numerics {
namespace {

__extension__ typedef unsigned __int128 UInt128;

// The least b with |x| ≤ 2^(b−1) − 1 (x ≥ 0): its bit length and a sign bit.
int signed_bits(UInt128 x) {
  int length = 0;
  while (x > 0) {
    ++length;
    x >>= 1;
  }
  return length + 1;
}

}  // namespace

AccumulatorCheck holds_accumulator(const AccumulatedOperands& operands, int bits) {
  internal_assert(bits >= 1 && bits <= 64);
  AccumulatorCheck check;
  const bool weights_bounded = operands.weight_run_l1 || operands.weight_largest;
  if (!operands.activation_largest || !weights_bounded) {
    check.holds = bits == 64;
    if (!check.holds) {
      check.reason = std::string("no proven range bounds the ") + (operands.activation_largest ? "weights'" : "activation's") +
                     " integers, so only the language's own 64-bit integers hold their sums, not " +
                     std::to_string(bits) + " bits";
    }
    return check;
  }
  internal_assert(*operands.activation_largest >= 0 && operands.terms >= 0);
  UInt128 weight_sum = std::numeric_limits<UInt128>::max();
  if (operands.weight_largest) {
    weight_sum = static_cast<UInt128>(operands.terms) * static_cast<uint64_t>(*operands.weight_largest);
  }
  if (operands.weight_run_l1) weight_sum = std::min<UInt128>(weight_sum, static_cast<uint64_t>(*operands.weight_run_l1));
  const UInt128 largest = weight_sum * static_cast<uint64_t>(*operands.activation_largest);
  check.bits_needed = signed_bits(largest);
  check.holds = check.bits_needed <= bits;
  if (!check.holds) {
    check.reason = "a partial sum may reach ±" + std::to_string(static_cast<uint64_t>(largest)) + " (activation codes up to " +
                   std::to_string(*operands.activation_largest) + ", " + std::to_string(operands.terms) +
                   " terms), which needs " + std::to_string(check.bits_needed) + " bits, not " + std::to_string(bits);
  }
  return check;
}

AccumulatedOperands operands_of(const exec::native::QuantizedWeights& weights, const Scheme& scheme, int word,
                                int64_t run) {
  internal_assert(run > 0 && weights.shape[static_cast<size_t>(weights.over)] % run == 0);
  AccumulatedOperands operands;
  operands.activation_largest = largest_code(scheme, word);
  operands.terms = run;
  // Strides of the weights' row-major shape, and Σ|q| along `over` per run of each output.
  const size_t rank = weights.shape.size();
  const size_t over = static_cast<size_t>(weights.over);
  size_t inner = 1;
  for (size_t a = over + 1; a < rank; ++a) inner *= static_cast<size_t>(weights.shape[a]);
  const size_t extent = static_cast<size_t>(weights.shape[over]);
  size_t count = 1;
  for (int64_t e : weights.shape) count *= static_cast<size_t>(e);
  const size_t outer = extent == 0 ? 0 : count / (extent * inner);
  int64_t largest = 0, l1_largest = 0;
  for (size_t o = 0; o < outer; ++o) {
    for (size_t j = 0; j < inner; ++j) {
      for (size_t start = 0; start < extent; start += static_cast<size_t>(run)) {
        int64_t l1 = 0;
        for (size_t k = start; k < start + static_cast<size_t>(run); ++k) {
          const int64_t q = std::llabs(weights.q_at((o * extent + k) * inner + j));
          largest = std::max(largest, q);
          l1 += q;
        }
        l1_largest = std::max(l1_largest, l1);
      }
    }
  }
  operands.weight_largest = largest;
  operands.weight_run_l1 = l1_largest;
  return operands;
}

AccumulatedOperands operands_of_codes(const Scheme& scheme, int word, int64_t run) {
  AccumulatedOperands operands;
  operands.activation_largest = largest_code(scheme, word);
  operands.weight_largest = 127;
  operands.terms = run;
  return operands;
}

}  // namespace presk::numerics
