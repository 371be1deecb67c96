// Measurement and widening (verify.h).
#include "solve/verify.h"

#include <fmt/format.h>

namespace presk::solve {

precision::MeasuredGap measure_recorded(const Offer& offer, const Assignment& assignment, Measurements& measurer,
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

void measure_and_widen(const Offer& offer, const Widening& widening, const Budget& budget, Measurements& measurer,
                       Solution& solution, const Progress& progress, const std::function<void()>& after_measure) {
  for (;;) {
    solution.gap = measure_recorded(offer, solution.assignment, measurer, false, budget.absolute, solution);
    solution.inside = solution.gap.absolute <= budget.absolute;
    if (progress) {
      progress(fmt::format("{}measurement {}: gap {:.3e} against a budget of {:.3e}: {}", widening.label,
                           solution.measurements, solution.gap.absolute, budget.absolute,
                           solution.inside ? "inside" : "outside"));
    }
    if (after_measure) after_measure();
    if (solution.inside) return;
    const int v = widening.choose(solution.assignment);
    if (v < 0) return;  // nothing left to widen and the gap is still outside
    Move move;
    move.kind = MoveKind::widen;
    move.value = v;
    move.from = solution.assignment[v];
    move.to = widening.to(v, move.from);
    move.gap = solution.gap.absolute;
    move.measurement = solution.measurements;
    move.term = widening.term(solution.assignment, v);
    solution.moves.push_back(move);
    solution.assignment[v] = move.to;
    ++solution.rounds;
    if (progress) {
      progress(fmt::format("{}widening round {}: {} {} → {}", widening.label, solution.rounds, offer.values[v].key,
                           offer.rung(v, move.from).name, offer.rung(v, move.to).name));
    }
  }
}

void verify_and_widen(const Offer& offer, const EstimateOptions& options, const Budget& budget,
                      Measurements& measurer, Solution& solution, const Progress& progress) {
  const Widening by_terms{[&](const Assignment& a) { return largest_contributor(offer, a, options); },
                          [](int, int from) { return from - 1; },
                          [&](const Assignment& a, int v) { return term(offer, a, v, options); },
                          ""};
  measure_and_widen(offer, by_terms, budget, measurer, solution, progress);
}

}  // namespace presk::solve
