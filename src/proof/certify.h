// The reference's own gap, certified (issue #36, item 3; the precision seed's "The reference's
// own gap"): every measured gap is taken against the MPFR reference at --bits, a realization of
// the denotation, not the denotation; δ_p, its distance to it, was taken as 0. The Arb ball
// reference at the same bits or more encloses each output's denotation in [m ± r], so the MPFR
// value x is within |x − m| + r of it — proven. `presk check --measure` and `presk solve
// --certify` print that bound beside the gap.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/reference/parameters.h"
#include "ir/ir.h"
#include "precision/calibrate.h"
#include "precision/measure.h"

namespace presk::proof {

// One ball run: its working precision, its bound, its wall time.
struct BallRun {
  long bits = 0;
  double radius = 0;
  double seconds = 0;
  std::string wrapped_at;  // where a radius became infinite (the run stopped there), or empty
};

struct CertifiedReference {
  double radius = 0;    // max over every element of every result and sample of |x − m| + r,
                        // rounded up: a proven bound on |MPFR reference − denotation|; +∞ where
                        // a ball is not finite and the MPFR value is not the same infinity
  int64_t samples = 0;  // samples certified (all of `exact`'s)
  long bits = 0;        // the ball run's working precision (≥ the MPFR reference's)
  double seconds = 0;   // the ball runs' wall time, all of them
  std::vector<BallRun> runs;  // certify_gap: each run, in order (the last is the bound's)
  std::string wrapped_at;     // the last run's BallRun::wrapped_at
};

// Runs `entry` in Arb ball arithmetic at `bits` (≥ exact.bits) on the samples of `exact` (MPFR)
// and bounds each MPFR output's distance to the denotation. A run in which a ball's radius
// becomes infinite while its midpoint is finite stops there, with an infinite bound (wrapped_at
// says where): the balls have lost every bit of this precision.
CertifiedReference certify_reference(const ir::Program& program, const ir::Function& entry,
                                     const reference::ParameterStore& parameters, int64_t count,
                                     const precision::SampleInputs& inputs,
                                     const precision::ExactOutputs& exact, int threads, long bits);

// A measured gap is read as a value only when it exceeds the reference's proven distance to the
// denotation by this factor; otherwise it is flagged.
constexpr double kCertifiedFactor = 1000;
inline bool certifies(const CertifiedReference& reference, double gap) {
  return gap > kCertifiedFactor * reference.radius;
}

// The ball run at exact.bits, then, while its bound does not certify `gap` (gap ≤ factor·radius,
// or a radius that is not finite) and a run at more bits is allowed, again at more bits: a ball
// loses about the same bits at any precision (each contraction's radius grows by Σ|w|, the
// wrapping effect), so from a finite radius r at b bits the next run takes
// b + ⌈log2(16·factor·r/gap)⌉ bits, rounded up to a multiple of 64; from an infinite one, 2b.
// At most max_bits (the fixed-point contraction's 512 is fast; above, ExactDot is ~10× slower);
// a gap of 0 is never certified, so it runs once. `note` reports each run (progress).
CertifiedReference certify_gap(const ir::Program& program, const ir::Function& entry,
                               const reference::ParameterStore& parameters, int64_t count,
                               const precision::SampleInputs& inputs, const precision::ExactOutputs& exact,
                               int threads, double gap, long max_bits,
                               const std::function<void(const std::string&)>& note);
constexpr long kCertifyMaxBits = 512;  // --certify-bits' default

}  // namespace presk::proof
