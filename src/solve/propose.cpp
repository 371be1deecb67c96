// The greedy and exhaustive proposals (propose.h).
#include "solve/propose.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "solve/greedy.h"
#include "support/diagnostics.h"

namespace presk::solve {
void propose_greedy(const Offer& offer, const EstimateOptions& options, double target, Solution& solution) {
  solution.assignment.assign(offer.values.size(), 0);
  TermTally tally(offer, options, solution.assignment);
  propose_steps(offer, tally, BytesObjective(offer), target, offered_steps(offer), solution);
  solution.proposed = solution.assignment;
}

void check_exhaustive(const Offer& offer) {
  double count = 1;
  int offered = 0;
  for (const Value& value : offer.values) {
    if (!value.offered()) continue;
    count *= static_cast<double>(value.ladder.size());
    ++offered;
  }
  if (count > kExhaustiveLimit) {
    user_error("E1106").hint("leave out --exhaustive (the greedy proposal), or offer fewer values (--min-gain)")
        << "--exhaustive would search " << count << " assignments of " << offered
        << " offered values; it searches at most " << kExhaustiveLimit;
  }
}

Assignment propose_exhaustive(const Offer& offer, const EstimateOptions& options, double target) {
  check_exhaustive(offer);
  std::vector<int> offered;
  for (size_t v = 0; v < offer.values.size(); ++v) {
    if (offer.values[v].offered()) offered.push_back(static_cast<int>(v));
  }
  Assignment assignment(offer.values.size(), 0);
  Assignment best = assignment;
  double best_traffic = traffic(offer, assignment);
  // Counts through every assignment of the offered values, the first value fastest.
  for (;;) {
    if (estimate(offer, assignment, options) <= target) {
      const double bytes = traffic(offer, assignment);
      if (bytes < best_traffic) {
        best_traffic = bytes;
        best = assignment;
      }
    }
    size_t digit = 0;
    while (digit < offered.size() &&
           ++assignment[offered[digit]] == static_cast<int>(offer.values[offered[digit]].ladder.size())) {
      assignment[offered[digit]] = 0;
      ++digit;
    }
    if (digit == offered.size()) break;
  }
  return best;
}

}  // namespace presk::solve
