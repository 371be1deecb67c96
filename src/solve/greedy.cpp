// The one proposal loop (greedy.h).
#include "solve/greedy.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace presk::solve {

TermTally::TermTally(const Offer& offer, const EstimateOptions& options, const Assignment& assignment)
    : offer_(offer), options_(options), terms_(offer.values.size()) {
  for (size_t v = 0; v < terms_.size(); ++v) terms_[v] = term(offer, assignment, static_cast<int>(v), options);
  for (size_t v = 0; v < offer.values.size(); ++v) affected_.push_back(affected_by(offer, static_cast<int>(v)));
  total_ = accumulate();
}

double TermTally::part(double t) const { return options_.form == EstimateForm::sum ? t : t * t; }

double TermTally::accumulate() const {
  double total = 0;
  for (double t : terms_) total += part(t);
  return total;
}

double TermTally::finish(double total) const { return options_.form == EstimateForm::sum ? total : std::sqrt(total); }

double TermTally::total() const { return finish(total_); }

double TermTally::with(Assignment& assignment, int value, int to) const {
  const int old = assignment[value];
  assignment[value] = to;
  double total = total_;
  for (int v : affected_[value]) total += part(term(offer_, assignment, v, options_)) - part(terms_[v]);
  assignment[value] = old;
  return finish(total);
}

void TermTally::apply(const Assignment& assignment, int value) {
  for (int v : affected_[value]) terms_[v] = term(offer_, assignment, v, options_);
  total_ = accumulate();
}

Gain BytesObjective::gain(const Assignment& assignment, int value, int to) const {
  const double bytes = offer_.bytes(value, assignment[value]) - offer_.bytes(value, to);
  return {bytes, bytes};
}

NextStep offered_steps(const Offer& offer) {
  return [&offer](const Assignment& assignment, int value) {
    return offer.values[value].offered() ? offer.narrower(value, assignment[value]) : -1;
  };
}

namespace {

struct Step {
  int value = -1, to = 0;
  Gain gain;
  double added = 0;     // the estimate's increase
  double estimate = 0;  // after the step
  double rank = 0;      // what the ranking divides by (Tally::increase)
};

// 0: it saves where it stands; 1: only hoped for; 2: not even then (never taken).
int tier(const Step& s) { return s.gain.saved > 0 ? 0 : s.gain.hoped > 0 ? 1 : 2; }
double saving(const Step& s) { return tier(s) == 0 ? s.gain.saved : s.gain.hoped; }
double ratio(const Step& s) {
  return s.rank > 0 ? saving(s) / s.rank : std::numeric_limits<double>::infinity();
}

bool better(const Step& a, const Step& b) {
  if (tier(a) != tier(b)) return tier(a) < tier(b);
  if (ratio(a) != ratio(b)) return ratio(a) > ratio(b);
  if (saving(a) != saving(b)) return saving(a) > saving(b);
  return a.value < b.value;
}

Move step_move(const Offer& offer, MoveKind kind, const Step& step, int from) {
  Move move;
  move.kind = kind;
  move.value = step.value;
  move.from = from;
  move.to = step.to;
  move.saves = offer.bytes(step.value, from) - offer.bytes(step.value, step.to);
  move.term = step.added;
  move.estimate = step.estimate;
  return move;
}

}  // namespace

Trajectory propose_steps(const Offer& offer, Tally& tally, const Objective& objective, double target, const NextStep& next,
                   Solution& solution) {
  Assignment& assignment = solution.assignment;
  std::vector<char> refused(offer.values.size(), 0);
  Trajectory trajectory{{assignment}, {solution.moves.size()}};
  for (;;) {
    const double current = tally.total();
    std::vector<Step> steps;
    for (size_t i = 0; i < offer.values.size(); ++i) {
      const int v = static_cast<int>(i);
      const int to = refused[v] ? -1 : next(assignment, v);
      if (to < 0) continue;
      Step step{v, to, objective.gain(assignment, v, to), 0, tally.with(assignment, v, to), 0};
      step.added = std::max(0.0, step.estimate - current);
      step.rank = tally.increase(assignment, v, to, step.estimate, current);
      steps.push_back(step);
    }
    std::sort(steps.begin(), steps.end(), better);
    // Walks them best first, refusing each that cannot fit, to the first that fits; when that
    // one saves nothing even hoped for, the loop ends, and the rest that cannot fit are refused.
    const Step* taken = nullptr;
    for (const Step& step : steps) {
      if (step.estimate <= target && taken == nullptr) {
        taken = &step;
        if (tier(step) != 2) break;
      } else if (step.estimate > target) {
        refused[step.value] = 1;
        solution.moves.push_back(step_move(offer, MoveKind::refuse, step, assignment[step.value]));
      }
    }
    if (taken == nullptr || tier(*taken) == 2) break;
    solution.moves.push_back(step_move(offer, MoveKind::narrow, *taken, assignment[taken->value]));
    assignment[taken->value] = taken->to;
    tally.apply(assignment, taken->value);
    trajectory.assignments.push_back(assignment);
    trajectory.moves_at.push_back(solution.moves.size());
  }
  trajectory.moves_at.back() = solution.moves.size();  // the refusals that ended it belong to the last
  return trajectory;
}

void keep_least(const Trajectory& trajectory, const std::function<double(const Assignment&)>& cost, Solution& solution) {
  std::vector<double> costs;
  for (const Assignment& a : trajectory.assignments) costs.push_back(cost(a));
  const size_t chosen = static_cast<size_t>(std::min_element(costs.begin(), costs.end()) - costs.begin());
  solution.assignment = trajectory.assignments[chosen];
  solution.moves.resize(trajectory.moves_at[chosen]);
}

void undo_slower(const std::function<double(const Assignment&, int value)>& near, Assignment& assignment,
                 std::vector<Move>& moves) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t v = 0; v < assignment.size(); ++v) {
      if (assignment[v] == 0) continue;
      Assignment wider = assignment;
      --wider[v];
      const int value = static_cast<int>(v);
      if (!(near(wider, value) < near(assignment, value))) continue;
      assignment = wider;
      for (auto it = moves.rbegin(); it != moves.rend(); ++it) {
        if (it->kind == MoveKind::narrow && it->value == value) {
          moves.erase(std::next(it).base());
          break;
        }
      }
      changed = true;
    }
  }
}

void refuse_unfit(const Offer& offer, const Tally& tally, const NextStep& next, double target, Solution& solution) {
  std::vector<char> refused(offer.values.size(), 0);
  for (const Move& m : solution.moves) {
    if (m.kind == MoveKind::refuse) refused[m.value] = 1;
  }
  Assignment assignment = solution.assignment;
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const int v = static_cast<int>(i);
    const int to = refused[v] ? -1 : next(assignment, v);
    if (to < 0) continue;
    Step step{v, to, {}, 0, tally.with(assignment, v, to), 0};
    step.added = std::max(0.0, step.estimate - tally.total());
    if (step.estimate > target) solution.moves.push_back(step_move(offer, MoveKind::refuse, step, assignment[v]));
  }
}

}  // namespace presk::solve
