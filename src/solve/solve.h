// The solver's driver (DESIGN.md §6, the seed's "A budget in, a realization out"): offer
// (offer.h) ▸ propose (propose.h) ▸ measure and widen (verify.h) ▸ narrow by measurement
// (narrow.h) ▸ the held-out measurement ▸ the solution (solution.h, record.h). What it
// promises: the final realization's largest elementwise gap against the exact reference, on
// the envelope's samples, is inside the budget (solution.inside says whether it got there),
// and the held-out gap is measured and printed beside it. Never a bound over all inputs.
#pragma once

#include <memory>

#include "profile/profile.h"
#include "solve/measurer.h"
#include "solve/narrow.h"
#include "solve/propose.h"
#include "solve/solution.h"

namespace presk::solve {

struct SolveOptions {
  Menu menu = default_menu();
  double min_gain = 1e-3;  // θ of rule 2 (0: off)
  EstimateOptions estimate;
  double margin = 2.5;  // k: --estimate rss aims at budget/k; --narrow keeps steps inside budget/k
  NarrowMode narrow = NarrowMode::none;
  bool exhaustive = false;
  bool quant = false;  // --quant: the integer pass after the float solve (quant_pass.h)
  exec::native::QuantScheme scheme = exec::native::QuantScheme::absmax;
  // --profile: price by predicted time on this machine (price.h) instead of bytes.
  std::shared_ptr<const profile::Profile> profile;
};

// The estimate's target: the budget, or budget/margin under --estimate rss.
double proposal_target(const Budget& budget, const SolveOptions& options);

struct SolveTimes {
  double proposal = 0;  // seconds of the proposal (estimate only)
  double total = 0;     // of solve(), the measurer's exact runs not included
};

Solution solve(const Offer& offer, const Budget& budget, const SolveOptions& options, Measurer& measurer,
               const Progress& progress, SolveTimes* times = nullptr);

}  // namespace presk::solve
