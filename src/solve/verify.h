// Verification by measurement and widening (the seed's "Where the measurement decides"): the
// proposal is run natively on the envelope's samples and its largest elementwise gap against
// the exact reference measured; while it exceeds the budget, the offered value with the
// largest term is widened by one menu step, and nothing is narrowed again.
#pragma once

#include <functional>
#include <string>

#include "solve/measurer.h"
#include "solve/solution.h"

namespace presk::solve {

using Progress = std::function<void(const std::string&)>;

// Measures `assignment` (in sample or held out), records a `measure` move judged against
// `threshold`, and returns its gap.
precision::MeasuredGap measure_recorded(const Offer& offer, const Assignment& assignment, Measurer& measurer,
                                        bool held_out, double threshold, Solution& solution);

// From solution.assignment: measure, widen, measure … until inside budget.absolute or every
// offered value is f64. Sets solution.gap, inside, rounds.
void verify_and_widen(const Offer& offer, const EstimateOptions& options, const Budget& budget,
                      Measurer& measurer, Solution& solution, const Progress& progress);

}  // namespace presk::solve
