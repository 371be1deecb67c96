// presk explain: every value of a solve its decision and the reasons, from the moves recorded
// (record.h): narrowed (the move, its saving, its term, the estimate then), refused (by how much
// the estimate would have passed its target), widened after a measurement (the gap then),
// narrowed or tried by measurement, undone on the held-out samples, or not offered (rule 1,
// rule 2 with its bytes against θ·B, or an unknown sensitivity).
#pragma once

#include <string>
#include <vector>

#include "solve/record.h"

namespace presk::solve {

struct Explanation {
  std::string kind, key, op, final_type;
  std::string decision;              // "narrowed to f32", "kept at f64", "not offered", …
  std::vector<std::string> reasons;  // one per move that concerns the value, in order
  std::vector<int> moves;            // those moves' numbers (1, 2, …)
};

std::vector<Explanation> explain(const Record& record);

// One move's reason as explain gives it: `n` its number (1, 2, …), `target` what the proposal's
// estimate aimed at, `budget` the threshold the measurements were held to (the step solve's too).
std::string move_reason(const RecordMove& move, int n, double target, double budget);

}  // namespace presk::solve
