// Narrowing by measurement (narrow.h).
#include "solve/narrow.h"

#include <fmt/format.h>

#include <algorithm>

namespace presk::solve {
namespace {

// The offered values that can take a step, the largest saving first (program order on a tie):
// bytes saved, or with a profile the predicted seconds saved, a step predicted not to save time
// left out (none predicted slower is kept, as the time proposal keeps none).
std::vector<int> by_saving(const Offer& offer, const Assignment& assignment, const Pricer* pricer) {
  std::vector<int> order;
  std::vector<double> saving(offer.values.size(), 0);
  const Types types = pricer ? types_of(offer, assignment) : Types{};
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const int v = static_cast<int>(i);
    const int to = offer.narrower(v, assignment[v]);
    if (!offer.values[v].offered() || to < 0) continue;
    if (pricer) {
      Assignment next = assignment;
      next[v] = to;
      saving[v] = pricer->local_seconds(types, v) - pricer->local_seconds(types_of(offer, next), v);
      if (!(saving[v] > 0)) continue;
    } else {
      saving[v] = offer.bytes(v, assignment[v]) - offer.bytes(v, to);
    }
    order.push_back(v);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return saving[a] > saving[b]; });
  return order;
}

// One pass: returns the moves kept.
std::vector<Move> narrow_pass(const Offer& offer, double threshold, Measurer& measurer, Solution& solution,
                              const Pricer* pricer) {
  std::vector<Move> kept;
  for (int v : by_saving(offer, solution.assignment, pricer)) {
    Assignment tried = solution.assignment;
    Move move;
    move.kind = MoveKind::try_narrow;
    move.value = v;
    move.from = tried[v];
    move.to = offer.narrower(v, tried[v]);
    move.saves = offer.bytes(v, move.from) - offer.bytes(v, move.to);
    tried[v] = move.to;
    const precision::MeasuredGap gap = measurer.in_sample(offer, tried);
    move.gap = gap.absolute;
    move.measurement = ++solution.measurements;
    move.inside = move.kept = gap.absolute <= threshold;
    solution.moves.push_back(move);
    if (move.kept) {
      solution.assignment = tried;
      solution.gap = gap;
      kept.push_back(move);
    }
  }
  return kept;
}

void undo_on_held_out(const Offer& offer, double threshold, std::vector<Move> kept, Measurer& measurer,
                      Solution& solution, const Progress& progress) {
  while (true) {
    const precision::MeasuredGap gap = measure_recorded(offer, solution.assignment, measurer, true, threshold, solution);
    if (gap.absolute <= threshold || kept.empty()) return;
    const Move last = kept.back();
    kept.pop_back();
    Move undo;
    undo.kind = MoveKind::undo;
    undo.value = last.value;
    undo.from = last.to;
    undo.to = last.from;
    undo.gap = gap.absolute;
    solution.moves.push_back(undo);
    solution.assignment[last.value] = last.from;
    if (progress) {
      progress(fmt::format("held out gap {:.3e} above {:.3e}: undo {}", gap.absolute, threshold,
                           offer.values[last.value].key));
    }
  }
}

}  // namespace

void narrow_by_measurement(const Offer& offer, NarrowMode mode, double margin, const Budget& budget,
                           Measurer& measurer, Solution& solution, const Progress& progress, const Pricer* pricer) {
  if (mode == NarrowMode::none || !solution.inside) return;
  const double threshold = budget.absolute / margin;
  std::vector<Move> kept;
  for (int pass = 1; pass <= kNarrowPasses; ++pass) {
    const std::vector<Move> step = narrow_pass(offer, threshold, measurer, solution, pricer);
    if (progress) {
      progress(fmt::format("narrowing pass {}: {} steps kept inside {:.3e} ({} measurements so far)", pass,
                           step.size(), threshold, solution.measurements));
    }
    kept.insert(kept.end(), step.begin(), step.end());
    if (step.empty()) break;
  }
  if (mode == NarrowMode::heldout && measurer.held_out_count() > 0) {
    undo_on_held_out(offer, threshold, kept, measurer, solution, progress);
  }
  solution.gap = measurer.in_sample(offer, solution.assignment);
  solution.inside = solution.gap.absolute <= budget.absolute;
}

}  // namespace presk::solve
