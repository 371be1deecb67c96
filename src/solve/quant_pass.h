// `presk solve --quant` (the seed's "Which weights to quantise"): the two-pass solver. After the
// float solve, every matrix — a parameter of rank two as declared, so a stacked bias is not
// one — may be stored as int8 or int4 (one scale per column, along −2 whatever its readers
// contract; --scheme absmax or pow2), under the budget the float assignment left. The proposal
// is priced by the exact reverse sweep: quantizing moves each weight by a known δ = ŵ − w, so to
// first order the entry moves by Σ g·δ; a matrix's term is √Σ (g·δ)² (largest over the
// samples) and a set's the root-sum-square of its matrices' terms — never the signed sum, so
// that cancellation cannot make a set of parameters look free. The greedy takes, one rung at a
// time (float → int8 → int4), the step of most bytes saved per unit of added square term while
// the set's term stays inside the budget left; then it measures, and widens the matrix of the
// largest term one rung at a time (int4 → int8 → its float type) until the gap is inside.
#pragma once

#include <map>
#include <utility>

#include "precision/first_order.h"
#include "solve/measurer.h"
#include "solve/verify.h"

namespace presk::solve {

// The float offer with, on every matrix (rule 2 and an unknown sensitivity do not apply: --quant
// is outside the rules; a matrix of one element is not one), the int8 and int4 rungs of `scheme` along −2 appended
// to the menu and to its ladder (where each saves bytes over the rung before).
Offer with_quant_rungs(const Offer& floats, const ir::Program& program,
                       const reference::ParameterStore& parameters, exec::native::QuantScheme scheme);

// By (value, ladder step) of every integer step: its term √Σ (g·δ)², absolute (the entry's units).
using QuantTerms = std::map<std::pair<int, int>, double>;
QuantTerms quant_terms(const Offer& offer, const ir::Program& program, const reference::ParameterStore& parameters,
                       const precision::ParameterGradients& gradients);

// The pass, from the float solve's `solution` (measured): the proposal, the measurement and the
// widening, recorded as moves. Leaves the solution as it is when it is outside the budget.
void quant_pass(const Offer& offer, const QuantTerms& terms, const Budget& budget, Measurer& measurer,
                Solution& solution, const Progress& progress);

// The float estimate of `assignment` (estimate.h's sum or root-sum-square), the values at an
// integer rung left out: their terms are in quant_estimate's units, printed beside it.
double float_estimate(const Offer& offer, const Assignment& assignment, const EstimateOptions& options);

// The set's term under `assignment`: √Σ of its integer steps' squared terms.
double quant_estimate(const Offer& offer, const QuantTerms& terms, const Assignment& assignment);

}  // namespace presk::solve
