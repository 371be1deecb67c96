// The reference's own gap, certified (issue #36, item 3; the precision seed's "The reference's
// own gap"): every measured gap is taken against the MPFR reference at --bits, a realization of
// the denotation, not the denotation; δ_p, its distance to it, was taken as 0. The Arb ball
// reference at the same bits encloses each output's denotation in [m ± r], so the MPFR value x is
// within |x − m| + r of it — proven. `presk check --measure` prints that bound beside the gap.
#pragma once

#include <cstdint>

#include "exec/reference/parameters.h"
#include "ir/ir.h"
#include "precision/calibrate.h"
#include "precision/measure.h"

namespace presk::proof {

struct CertifiedReference {
  double radius = 0;    // max over every element of every result and sample of |x − m| + r,
                        // rounded up: a proven bound on |MPFR reference − denotation|; +∞ where
                        // a ball is not finite and the MPFR value is not the same infinity
  int64_t samples = 0;  // samples certified (all of `exact`'s)
  double seconds = 0;   // the ball run's wall time
};

// Runs `entry` in Arb ball arithmetic at exact.bits on the samples of `exact` (MPFR) and bounds
// each MPFR output's distance to the denotation.
CertifiedReference certify_reference(const ir::Program& program, const ir::Function& entry,
                                     const reference::ParameterStore& parameters, int64_t count,
                                     const precision::SampleInputs& inputs,
                                     const precision::ExactOutputs& exact, int threads);

// A measured gap is read as a value only when it exceeds the reference's proven distance to the
// denotation by this factor; otherwise it is flagged.
constexpr double kCertifiedFactor = 1000;
inline bool certifies(const CertifiedReference& reference, double gap) {
  return gap > kCertifiedFactor * reference.radius;
}

}  // namespace presk::proof
