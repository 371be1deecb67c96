// The one proposal loop (the seed's "A budget in, a realization out"): from an assignment, one
// ladder step at a time, the step of the most objective saved per unit it adds to the estimate,
// while the estimate stays inside the target; a step that would pass the target is refused for
// good (narrowing never lowers the estimate, so it cannot fit later). Parameterised by its
// objective (bytes, or predicted seconds: price.h) and its estimate (the first-order terms'
// sum or root-sum-square: estimate.h; --quant's √Σ(g·δ)²: quant_pass.h; the step's isolated
// gaps: src/step/solve_step.cpp). Every solver of presk proposes through it, and records its
// moves in the same Solution (solution.h) that explain reads.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "solve/estimate.h"
#include "solve/solution.h"

namespace presk::solve {

// The estimate the loop keeps as it goes: its value now, its value with one value's step taken
// (the rest as in `assignment`, which it may change and restores), and the step taken.
class Tally {
 public:
  virtual ~Tally() = default;
  virtual double total() const = 0;
  virtual double with(Assignment& assignment, int value, int to) const = 0;
  virtual void apply(const Assignment& assignment, int value) = 0;
  // What the ranking divides the saving by: the estimate's increase by default (`with` the
  // estimate after the step, `now` before it); --quant's, the added square term.
  virtual double increase(const Assignment& /*assignment*/, int /*value*/, int /*to*/, double with, double now) const {
    return std::max(0.0, with - now);
  }
};

// The first-order estimate (estimate.h): each value's term kept, so that a step re-evaluates
// only the terms it affects (affected_by).
class TermTally : public Tally {
 public:
  TermTally(const Offer& offer, const EstimateOptions& options, const Assignment& assignment);
  double total() const override;
  double with(Assignment& assignment, int value, int to) const override;
  void apply(const Assignment& assignment, int value) override;

 private:
  double part(double t) const;
  double accumulate() const;
  double finish(double total) const;

  const Offer& offer_;
  EstimateOptions options_;
  std::vector<double> terms_;
  double total_ = 0;  // Σ part(t)
  std::vector<std::vector<int>> affected_;
};

// What a step saves of the objective: `saved` where it stands, `hoped` once its neighbours
// follow (a chain narrowed through a first step that alone is a loss). A step that saves
// nothing even hoped for is never taken.
struct Gain {
  double saved = 0, hoped = 0;
};

class Objective {
 public:
  virtual ~Objective() = default;
  virtual Gain gain(const Assignment& assignment, int value, int to) const = 0;
};

// Bytes per sample: a step saves its bytes, where it stands and hoped for alike.
class BytesObjective : public Objective {
 public:
  explicit BytesObjective(const Offer& offer) : offer_(offer) {}
  Gain gain(const Assignment& assignment, int value, int to) const override;

 private:
  const Offer& offer_;
};

// The step a value may take next from `assignment` (−1: none); by default the offered values'
// next rung (Offer::narrower).
using NextStep = std::function<int(const Assignment& assignment, int value)>;
NextStep offered_steps(const Offer& offer);

// Every assignment the loop passed through, from its start, and how many moves the solution
// held when each was reached (a caller that keeps a prefix cuts the moves there).
struct Trajectory {
  std::vector<Assignment> assignments;
  std::vector<size_t> moves_at;
};

// From solution.assignment: ranks the steps by objective saved per unit added (Tally::increase) (a step that adds
// nothing first; a step that only hopes to save after those that save where they stand), then
// by the larger saving, then program order, so the proposal is the same on every run. Records
// each step taken (narrow) and each refused (refuse) in solution.moves, a step's `saves` its
// bytes per sample, `term` what it adds and `estimate` the estimate after it; leaves the last
// assignment in solution.assignment and solution.proposed.
Trajectory propose_steps(const Offer& offer, Tally& tally, const Objective& objective, double target, const NextStep& next,
                   Solution& solution);

// With a cost to minimise (predicted seconds): keeps the trajectory's assignment of the least
// cost (the shortest of equals) in solution.assignment, and its moves alone.
void keep_least(const Trajectory& trajectory, const std::function<double(const Assignment&)>& cost, Solution& solution);

// After keep_least cut the loop short: records as refused, from solution.assignment, each
// value's next step that cannot fit (`tally` at solution.assignment) and that no move refused.
void refuse_unfit(const Offer& offer, const Tally& tally, const NextStep& next, double target, Solution& solution);

// Widens, one step at a time in program order until nothing changes, every value whose last
// step `near` (the cost of what the value's type changes) predicts costlier than the step
// before it where it now stands; drops that value's last narrowing move.
void undo_slower(const std::function<double(const Assignment&, int value)>& near, Assignment& assignment,
                 std::vector<Move>& moves);

}  // namespace presk::solve
