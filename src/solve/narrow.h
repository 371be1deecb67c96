// Narrowing by measurement (the seed's "A rounding term from the values, and narrowing by
// measurement" and "Three ways to spend the budget"), after the measurement passes:
// --narrow measured: each offered value narrowed one step, the largest saving first, measured,
// and kept while the gap stays inside budget/k (k = --margin), in up to three passes;
// --narrow heldout: the same, then the kept steps undone, the last first, until the gap on the
// held-out samples is inside budget/k (early stopping on data the narrowing never saw).
// With a `pricer` (--profile) the steps are ranked by predicted seconds saved, and a step the
// profile predicts not to save time is never tried: none predicted slower is kept.
#pragma once

#include "solve/price.h"
#include "solve/verify.h"

namespace presk::solve {

enum class NarrowMode { none, measured, heldout };

constexpr int kNarrowPasses = 3;

void narrow_by_measurement(const Offer& offer, NarrowMode mode, double margin, const Budget& budget,
                           Measurer& measurer, Solution& solution, const Progress& progress,
                           const Pricer* pricer = nullptr);

}  // namespace presk::solve
