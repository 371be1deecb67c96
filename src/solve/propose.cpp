// The greedy and exhaustive proposals (propose.h).
#include "solve/propose.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/diagnostics.h"

namespace presk::solve {
namespace {

struct Step {
  int value = -1;
  int to = 0;
  double saves = 0;
  double added = 0;     // the estimate's increase
  double estimate = 0;  // after the step
  double ratio() const { return added > 0 ? saves / added : std::numeric_limits<double>::infinity(); }
};

// Keeps each value's term (and Σ t or Σ t²) so that a step re-evaluates only what it affects.
class Tally {
 public:
  Tally(const Offer& offer, const EstimateOptions& options, const Assignment& assignment)
      : offer_(offer), options_(options), terms_(offer.values.size()) {
    for (size_t v = 0; v < terms_.size(); ++v) terms_[v] = term(offer, assignment, static_cast<int>(v), options);
    for (size_t v = 0; v < offer.values.size(); ++v) affected_.push_back(affected_by(offer, static_cast<int>(v)));
    total_ = accumulate(terms_);
  }
  double total() const { return finish(total_); }
  // The estimate with `value` at `rung`, the rest as in `assignment`.
  double with(Assignment& assignment, int value, int rung) const {
    const int old = assignment[value];
    assignment[value] = rung;
    double total = total_;
    for (int v : affected_[value]) total += part(term(offer_, assignment, v, options_)) - part(terms_[v]);
    assignment[value] = old;
    return finish(total);
  }
  void apply(const Assignment& assignment, int value) {
    for (int v : affected_[value]) terms_[v] = term(offer_, assignment, v, options_);
    total_ = accumulate(terms_);
  }

 private:
  double part(double t) const { return options_.form == EstimateForm::sum ? t : t * t; }
  double accumulate(const std::vector<double>& terms) const {
    double total = 0;
    for (double t : terms) total += part(t);
    return total;
  }
  double finish(double total) const { return options_.form == EstimateForm::sum ? total : std::sqrt(total); }

  const Offer& offer_;
  const EstimateOptions& options_;
  std::vector<double> terms_;
  double total_ = 0;  // Σ part(t)
  std::vector<std::vector<int>> affected_;
};

// Every step the offered values can take, best first: the largest saving per unit added,
// then the largest saving, then program order (so the proposal is the same on every run).
std::vector<Step> candidate_steps(const Offer& offer, const Tally& tally, Assignment& assignment,
                                  const std::vector<char>& refused, double current) {
  std::vector<Step> steps;
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const int v = static_cast<int>(i);
    const int to = offer.narrower(v, assignment[v]);
    if (!offer.values[v].offered() || refused[v] || to < 0) continue;
    Step step{v, to, offer.bytes(v, assignment[v]) - offer.bytes(v, to), 0, 0};
    step.estimate = tally.with(assignment, v, to);
    step.added = std::max(0.0, step.estimate - current);
    steps.push_back(step);
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    if (a.ratio() != b.ratio()) return a.ratio() > b.ratio();
    return a.saves > b.saves;
  });
  return steps;
}

Move step_move(MoveKind kind, const Step& step, int from) {
  Move move;
  move.kind = kind;
  move.value = step.value;
  move.from = from;
  move.to = step.to;
  move.saves = step.saves;
  move.term = step.added;
  move.estimate = step.estimate;
  return move;
}

}  // namespace

void propose_greedy(const Offer& offer, const EstimateOptions& options, double target, Solution& solution) {
  Assignment assignment(offer.values.size(), 0);
  Tally tally(offer, options, assignment);
  std::vector<char> refused(offer.values.size(), 0);
  double current = tally.total();
  for (;;) {
    const std::vector<Step> steps = candidate_steps(offer, tally, assignment, refused, current);
    const Step* taken = nullptr;
    for (const Step& step : steps) {
      if (step.estimate <= target) {
        taken = &step;
        break;
      }
      refused[step.value] = 1;
      solution.moves.push_back(step_move(MoveKind::refuse, step, assignment[step.value]));
    }
    if (taken == nullptr) break;
    solution.moves.push_back(step_move(MoveKind::narrow, *taken, assignment[taken->value]));
    assignment[taken->value] = taken->to;
    tally.apply(assignment, taken->value);
    current = tally.total();
  }
  solution.proposed = assignment;
  solution.assignment = assignment;
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
