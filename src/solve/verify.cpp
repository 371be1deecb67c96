// Measurement and widening (verify.h).
#include "solve/verify.h"

#include <fmt/format.h>

namespace presk::solve {

precision::MeasuredGap measure_recorded(const Offer& offer, const Assignment& assignment, Measurer& measurer,
                                        bool held_out, double threshold, Solution& solution) {
  const precision::MeasuredGap gap =
      held_out ? *measurer.held_out(offer, assignment) : measurer.in_sample(offer, assignment);
  Move move;
  move.kind = MoveKind::measure;
  move.gap = gap.absolute;
  move.inside = gap.absolute <= threshold;
  move.held_out = held_out;
  if (!held_out) move.measurement = ++solution.measurements;
  solution.moves.push_back(move);
  return gap;
}

namespace {

// The offered value not at f64 with the largest term (the first in program order on a tie).
int largest_contributor(const Offer& offer, const Assignment& assignment, const EstimateOptions& options) {
  int best = -1;
  double best_term = -1;
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const int v = static_cast<int>(i);
    if (!offer.values[v].offered() || assignment[v] == 0) continue;
    const double t = term(offer, assignment, v, options);
    if (t > best_term) {
      best = v;
      best_term = t;
    }
  }
  return best;
}

}  // namespace

void verify_and_widen(const Offer& offer, const EstimateOptions& options, const Budget& budget,
                      Measurer& measurer, Solution& solution, const Progress& progress) {
  for (;;) {
    solution.gap = measure_recorded(offer, solution.assignment, measurer, false, budget.absolute, solution);
    solution.inside = solution.gap.absolute <= budget.absolute;
    if (progress) {
      progress(fmt::format("measurement {}: gap {:.3e} against a budget of {:.3e}: {}", solution.measurements,
                           solution.gap.absolute, budget.absolute, solution.inside ? "inside" : "outside"));
    }
    if (solution.inside) return;
    const int v = largest_contributor(offer, solution.assignment, options);
    if (v < 0) return;  // every offered value is f64 and the gap is still outside
    Move move;
    move.kind = MoveKind::widen;
    move.value = v;
    move.from = solution.assignment[v];
    move.to = move.from - 1;
    move.gap = solution.gap.absolute;
    move.measurement = solution.measurements;
    move.term = term(offer, solution.assignment, v, options);
    solution.moves.push_back(move);
    solution.assignment[v] = move.to;
    ++solution.rounds;
    if (progress) {
      progress(fmt::format("widening round {}: {} {} → {}", solution.rounds, offer.values[v].key,
                           offer.rung(v, move.from).name, offer.rung(v, move.to).name));
    }
  }
}

}  // namespace presk::solve
