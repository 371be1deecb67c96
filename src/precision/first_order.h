// First-order predictions of what moving the weights does to a scalar entry (docs/precision.md,
// "quantize"; the seed's "Which weights to quantise"): with g the exact cotangent of the entry
// with respect to a parameter (the reverse sweep's, `entry.vjp` seeded with 1, MPFR at --bits)
// and δ = ŵ − w the move of its values as a realization stores them, the entry moves by
// Σ g·δ to first order. Three estimates, not bounds of the true change: the worst case
// Σ |g|·|δ| (no cancellation allowed), the signed Σ g·δ, and the root-sum-square √Σ (g·δ)²
// (what the solver's `--quant` pass proposes by: never negative, and a set of parameters whose
// signs cancel does not look free).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "exec/reference/parameters.h"
#include "ir/ir.h"
#include "precision/calibrate.h"

namespace presk::precision {

// The exact cotangents of a scalar entry per sample, by parameter path, rounded to binary64.
struct ParameterGradients {
  std::vector<std::map<std::string, std::vector<double>>> samples;
};

// Takes one sample's cotangents as they are computed (in sample order): given to the two
// functions below, each sample goes to it and none is kept, so one sample's are held at a time.
using GradientSink = std::function<void(std::map<std::string, std::vector<double>>&&)>;

// E1120 when the entry's result is not one real scalar (a tensor entry's Σ g·δ would be the
// change of Σ y, not of its gap): what exact_parameter_gradients checks, for a command to check
// before any work.
void require_scalar_entry(const ir::Function& entry);

// E1120 as require_scalar_entry.
ParameterGradients exact_parameter_gradients(const ir::Program& program, const ir::Function& entry,
                                             const reference::ParameterStore& parameters, int64_t count,
                                             const SampleInputs& inputs, long bits, int threads,
                                             const GradientSink& each = {});

// The same cotangents computed by the native executor in binary64 (`solve --sweep f64`):
// `entry.vjp` run natively, every value in binary64. E1120 as require_scalar_entry.
ParameterGradients binary64_parameter_gradients(const ir::Program& program, const ir::Function& entry,
                                                const reference::ParameterStore& parameters, int64_t count,
                                                const SampleInputs& inputs, int threads,
                                                const GradientSink& each = {});

// The three first-order sums of one sample (absolute, in the entry's units).
struct FirstOrderSums {
  double bound = 0;   // Σ |g|·|δ|
  double signed_sum = 0;  // Σ g·δ
  double squares = 0;  // Σ (g·δ)²
};

// Per parameter path (those of `paths`, or every one of the gradients when empty) and sample,
// the sums for the move from `true_weights` to `moved_weights` (each product and sum in
// MPFR at 128 bits, then rounded).
std::map<std::string, std::vector<FirstOrderSums>> first_order_sums(
    const ParameterGradients& gradients, const reference::ParameterStore& true_weights,
    const reference::ParameterStore& moved_weights, const std::vector<std::string>& paths = {});

// Over a set of parameters: per sample the sums added (squares too), then over the samples the
// largest bound, the signed sum of largest magnitude and the largest √squares.
struct FirstOrderPrediction {
  double bound = 0, signed_sum = 0, rss = 0;  // absolute
};
FirstOrderPrediction combine(const std::map<std::string, std::vector<FirstOrderSums>>& sums);

}  // namespace presk::precision
