// What `presk margins` measures (docs/precision.md, "margins"): an accuracy target turned into a
// budget on the logits. The exact model's margin at each position, m = top logit − second
// logit, bounds what a realization can change: one within ε of every logit changes a decision
// (argmax) only where m ≤ 2ε. ε*(δ) is the largest ε whose fraction of positions with m < 2ε
// is at most δ at a stated confidence (a one-sided Clopper–Pearson bound on the binomial
// fraction of the sample): over positions (each taken as an independent trial, which the
// positions of one window are not: the confidence is overstated), or over windows (a window a
// close call when any of its positions is: independent trials, fewer of them).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "exec/native/realization.h"
#include "exec/reference/parameters.h"
#include "ir/ir.h"
#include "precision/calibrate.h"

namespace presk::precision {

// E1150 unless `entry` has one result, a real tensor R[…, V] of rank ≥ 1 with V ≥ 2 classes.
// Returns its positions per sample (the product of the leading extents) and V.
struct MarginShape {
  int64_t positions = 0;  // per sample
  int64_t classes = 0;    // V, the last axis
};
MarginShape margin_shape(const ir::Function& entry);

struct MarginOptions {
  long bits = 128;  // the exact reference's MPFR precision
  int threads = 1;  // samples in parallel, each on one thread; the results do not depend on it
  // Realizations to compare (--realize), each run natively on every sample; none: the exact model only.
  std::vector<const exec::native::Realization*> realizations;
  // Called after each sample, one call at a time, from any thread: (samples done, samples).
  std::function<void(int64_t, int64_t)> progress;
};

// What a realization does on the same positions.
struct RealizedMargins {
  double gap = 0;        // max |native − exact| over every logit, rounded up; +∞ if one is not finite
  int64_t flipped = 0;   // positions whose native argmax is not the exact one
  int64_t allowed = 0;   // positions its margins allow to flip: m ≤ 2·gap (flipped ≤ allowed)
};

struct Margins {
  MarginShape shape;
  int64_t samples = 0;
  std::vector<double> sorted;  // every position's exact margin, rounded down, ascending
  // Each window's (sample's) smallest margin, ascending: a window is a close call when any of its
  // positions is. epsilon_star over these counts windows, not positions — the positions of one
  // window share their context and are not independent trials; the windows are.
  std::vector<double> window_minima;
  std::vector<RealizedMargins> realized;  // per options.realizations, in order
};

// Runs `entry` on the exact reference (MPFR at options.bits) on `count` samples, sample k on
// inputs(k), and records every position's margin; with options.realizations, also runs it
// natively under each realization. A non-finite exact logit is E1154.
Margins measure_margins(const ir::Program& program, const ir::Function& entry,
                        const reference::ParameterStore& parameters, int64_t count,
                        const SampleInputs& inputs, const MarginOptions& options);

// The binomial CDF P(X ≤ k), X ~ Bin(n, p), summed in log space in long double.
long double binomial_cdf(int64_t k, int64_t n, long double p);

// The one-sided Clopper–Pearson upper bound on a binomial fraction at `confidence` after k
// successes in n trials: the p with P(X ≤ k; n, p) = 1 − confidence (1 when k ≥ n), by
// bisection on the binomial CDF.
long double clopper_pearson_upper(int64_t k, int64_t n, long double confidence);

// The fewest positions at which ε*(δ) exists at `confidence`: the smallest n with
// (1 − δ)^n ≤ 1 − confidence (zero close calls then bound the fraction by δ).
int64_t minimum_positions(double delta, double confidence);

struct EpsilonStar {
  double delta = 0, confidence = 0;
  int64_t positions = 0;
  int64_t allowed = 0;      // K: the most close calls whose Clopper–Pearson bound is ≤ δ
  double upper = 0;         // that bound at K
  double epsilon = 0;       // ε* = m₍K+1₎ / 2, the (K+1)-th smallest margin halved
  int64_t close_calls = 0;  // positions with m < 2ε* (≤ K; fewer where margins tie)
};

// ε*(δ) from the sorted margins: E1151 for δ outside (0, 1), E1152 for a confidence outside
// (0, 1), E1153 for fewer positions than minimum_positions(δ, confidence).
EpsilonStar epsilon_star(const std::vector<double>& sorted, double delta, double confidence);

// The nearest-rank q-quantile of the sorted margins: the ⌈q·n⌉-th smallest (the smallest at q = 0).
double margin_quantile(const std::vector<double>& sorted, double q);

// What epsilon_star checks first, for a caller to check before it runs anything: E1151 for a δ
// outside (0, 1), E1152 for a confidence outside (0, 1), E1153 for too few positions.
void check_delta(double delta);
void check_confidence(double confidence);
void check_positions(int64_t positions, double delta, double confidence);

}  // namespace presk::precision
