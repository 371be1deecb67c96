// `presk run --grad`: the entry's generated vjp (src/ad/, docs/ad.md) on a prepared run, seeded
// with a cotangent of ones (1 for a scalar entry): run by the exact reference (--exact), or by
// the native executor under a realization (--realize R), or both, beside each cotangent's gap.
#pragma once

#include <string>

#include "cli/command.h"
#include "cli/pipeline.h"

namespace presk::cli {

struct GradientRunOptions {
  long bits = 256;      // the reference's precision (MPFR)
  int digits = 10;      // significant digits of the printed value and norms
  std::string out;      // --out F.safetensors: the cotangents as F64 tensors
  std::string realize;  // --realize R: the native executor under R (empty: the exact reference)
  bool scalar = false;  // native: the defining scalar kernels
  bool exact = false;   // with --realize: also the exact vjp, and each cotangent's gap to it
};

// Prints the entry's value and, per real argument and per parameter, the cotangent's shape
// and 2-norm (--json: every element as decimal strings); with --samples N the values and
// cotangents are summed over the samples (the gradient of Σₖ ⟨1, fₖ⟩; native: in binary64).
// With --realize and --exact, each cotangent's largest gap |native − exact|, relative to its
// largest |exact|. E0542 when the entry has nothing to differentiate (no real result, or no
// real argument or parameter read).
int run_gradient(const PreparedRun& prepared, const GradientRunOptions& options,
                 const GlobalOptions& global);

}  // namespace presk::cli
