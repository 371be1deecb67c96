// The proposal (the seed's "A budget in, a realization out"): from all-f64, greedily, one menu
// step at a time, the step that saves the most bytes per unit of term it adds, while the
// estimate stays inside the target; a step that would pass it is refused for good (narrowing
// never lowers the estimate, so it cannot fit later). --exhaustive searches every assignment
// of the offered values for the least traffic whose estimate is inside the target: the
// optimum of the same estimate, which the greedy is judged against.
#pragma once

#include <cstdint>

#include "solve/estimate.h"
#include "solve/solution.h"

namespace presk::solve {

// Appends the proposal's moves to `solution` and sets solution.proposed.
void propose_greedy(const Offer& offer, const EstimateOptions& options, double target, Solution& solution);

// The exhaustive optimum (no moves recorded). E1106 when the menu's size to the power of the
// offered values passes kExhaustiveLimit (check_exhaustive, which a command calls before any work).
constexpr double kExhaustiveLimit = 2e6;
void check_exhaustive(const Offer& offer);
Assignment propose_exhaustive(const Offer& offer, const EstimateOptions& options, double target);

}  // namespace presk::solve
