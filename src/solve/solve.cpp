// The solver's driver (solve.h).
#include "solve/solve.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "solve/price.h"

namespace presk::solve {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The exhaustive optimum, recorded as steps from f64 in program order, one rung at a time, each
// with what it adds to the estimate on that path and the estimate after it (explain reads them).
void record_path(const Offer& offer, const EstimateOptions& options, Solution& solution) {
  Assignment path(offer.values.size(), 0);
  double before = estimate(offer, path, options);
  for (size_t v = 0; v < offer.values.size(); ++v) {
    for (int rung = 0; rung < solution.proposed[v]; ++rung) {
      Move move;
      move.kind = MoveKind::narrow;
      move.value = static_cast<int>(v);
      move.from = rung;
      move.to = rung + 1;
      move.saves = offer.bytes(static_cast<int>(v), rung) - offer.bytes(static_cast<int>(v), rung + 1);
      path[v] = rung + 1;
      move.estimate = estimate(offer, path, options);
      move.term = std::max(0.0, move.estimate - before);
      before = move.estimate;
      solution.moves.push_back(move);
    }
  }
}

void propose(const Offer& offer, const SolveOptions& options, double target, Solution& solution,
             const Progress& progress) {
  if (options.profile) {
    const TimeProposal p = propose_by_time(offer, Pricer(offer, *options.profile), options.estimate, target, solution);
    if (progress) {
      progress(fmt::format("by time: the time greedy predicts {:.4f} ms, the traffic greedy (slower steps undone) {:.4f} ms; "
                           "kept the {}", 1e3 * p.by_time, 1e3 * p.by_bytes, p.kept_bytes ? "traffic greedy's" : "time greedy's"));
    }
    return;
  }
  if (!options.exhaustive) {
    propose_greedy(offer, options.estimate, target, solution);
    return;
  }
  solution.proposed = propose_exhaustive(offer, options.estimate, target);
  solution.assignment = solution.proposed;
  record_path(offer, options.estimate, solution);
}

}  // namespace

double proposal_target(const Budget& budget, const SolveOptions& options) {
  return options.estimate.form == EstimateForm::rss ? budget.absolute / options.margin : budget.absolute;
}

Solution solve(const Offer& offer, const Budget& budget, const SolveOptions& options, Measurer& measurer,
               const Progress& progress, SolveTimes* times) {
  const auto start = std::chrono::steady_clock::now();
  Solution solution;
  solution.target = proposal_target(budget, options);
  propose(offer, options, solution.target, solution, progress);
  const double proposal_seconds = seconds_since(start);
  if (progress) {
    int narrowed = 0;
    for (int rung : solution.proposed) narrowed += rung > 0;
    progress(fmt::format("proposal: {} of {} offered values narrowed, estimate {:.3e} against {:.3e} ({:.2f} s)",
                         narrowed, offer.offered_count(), estimate(offer, solution.proposed, options.estimate),
                         solution.target, proposal_seconds));
  }
  verify_and_widen(offer, options.estimate, budget, measurer, solution, progress);
  std::optional<Pricer> pricer;
  if (options.profile) pricer.emplace(offer, *options.profile);
  narrow_by_measurement(offer, options.narrow, options.margin, budget, measurer, solution, progress,
                        pricer ? &*pricer : nullptr);
  if (measurer.held_out_count() > 0) {
    solution.held_out = measure_recorded(offer, solution.assignment, measurer, true, budget.absolute, solution);
    solution.held_out_samples = measurer.held_out_count();
    if (progress) progress(fmt::format("held out: gap {:.3e} on {} samples", solution.held_out->absolute,
                                       solution.held_out_samples));
  }
  solution.estimate = estimate(offer, solution.assignment, options.estimate);
  if (times) {
    times->proposal = proposal_seconds;
    times->total = seconds_since(start);
  }
  return solution;
}

}  // namespace presk::solve
