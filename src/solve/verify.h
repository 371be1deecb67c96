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
precision::MeasuredGap measure_recorded(const Offer& offer, const Assignment& assignment, Measurements& measurer,
                                        bool held_out, double threshold, Solution& solution);

// What a widening loop widens: the value to widen next (−1: none left), the step it goes to,
// and the term it had; `label` prefixes the progress lines ("" or "--quant ").
struct Widening {
  std::function<int(const Assignment&)> choose;
  std::function<int(int value, int from)> to;
  std::function<double(const Assignment&, int value)> term;
  std::string label;
};

// From solution.assignment: measure, widen, measure … until inside budget.absolute or nothing is
// left to widen. Sets solution.gap, inside, rounds; `after_measure` (may be empty) runs after each
// measurement.
void measure_and_widen(const Offer& offer, const Widening& widening, const Budget& budget, Measurements& measurer,
                       Solution& solution, const Progress& progress,
                       const std::function<void()>& after_measure = {});

// measure_and_widen by the estimate's terms: the offered value not at f64 with the largest term
// widens by one menu step, until every offered value is f64.
void verify_and_widen(const Offer& offer, const EstimateOptions& options, const Budget& budget,
                      Measurements& measurer, Solution& solution, const Progress& progress);

}  // namespace presk::solve
