// A solve's solution and its record: the assignment, every move the solver made (a narrowing
// taken or refused by the estimate, a measurement, a widening after one, a narrowing tried by
// measurement, a step undone on the held-out samples), and what it measured. Written into the
// realization file as its `solve` field (which the executor ignores), read back by explain.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exec/native/realization.h"
#include "precision/measure.h"
#include "solve/estimate.h"

namespace presk::solve {

enum class MoveKind {
  narrow,     // the proposal took a step: `value` from → to
  refuse,     // the proposal refused a step: the estimate would pass the target
  measure,    // a measurement of the assignment then (in sample, or held out)
  widen,      // after measurement `measurement` failed: `value` from → to
  try_narrow, // --narrow: a step measured, kept (`kept`) or not
  undo,       // --narrow heldout: a kept step undone on the held-out samples
};
const char* move_kind_name(MoveKind kind);

struct Move {
  MoveKind kind = MoveKind::narrow;
  int value = -1;         // index into the offer's values (-1 for a measurement)
  int from = 0, to = 0;   // rungs
  double saves = 0;       // bytes one sample saves by the step (narrow, refuse, try_narrow)
  double term = 0;        // what the step adds to the estimate (narrow, refuse)
  double estimate = 0;    // the estimate after the step (narrow), or had it been taken (refuse)
  double gap = 0;         // measure: its gap; widen: the failed measurement's; try_narrow: the step's
  int measurement = 0;    // measure: its number (1, 2, …); widen/try_narrow/undo: the one it follows/made
  bool inside = false;    // measure, try_narrow: inside the threshold it was held to
  bool kept = false;      // try_narrow
  bool held_out = false;  // measure: on the held-out samples
};

struct Budget {
  bool relative = true;  // --budget (relative to the output's largest magnitude) or --budget-abs
  double epsilon = 0;    // as given
  double absolute = 0;   // the threshold on max |native − exact|
  std::string source;    // "--budget", "--budget-abs", or "the entry's precision clause"
};

struct Solution {
  Assignment proposed;    // after the proposal
  Assignment assignment;  // the final one
  std::vector<Move> moves;
  double target = 0;         // what the proposal's estimate aimed at
  double estimate = 0;       // of the final assignment
  int rounds = 0;            // widening rounds
  int measurements = 0;      // in sample
  bool inside = false;       // the final assignment's in-sample gap is within the budget
  precision::MeasuredGap gap;               // in sample, of the final assignment
  std::optional<precision::MeasuredGap> held_out;  // of the final assignment, when samples were held out
  int64_t held_out_samples = 0;
  std::optional<double> quant_estimate;  // --quant: √Σ (g·δ)² of the matrices it left in integers
};

// The realization of an assignment: "default": f64, the offered values not at f64 by name.
exec::native::Realization realization_of(const Offer& offer, const Assignment& assignment);

}  // namespace presk::solve
