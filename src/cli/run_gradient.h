// `presk run --exact --grad`: the entry's generated vjp (src/ad/, docs/ad.md) run by the exact
// reference on a prepared run, seeded with a cotangent of ones (1 for a scalar entry).
#pragma once

#include <string>

#include "cli/command.h"
#include "cli/pipeline.h"

namespace presk::cli {

struct GradientRunOptions {
  long bits = 256;   // the reference's precision (MPFR)
  int digits = 10;   // significant digits of the printed value and norms
  std::string out;   // --out F.safetensors: the cotangents as F64 tensors
};

// Prints the entry's value and, per real argument and per parameter, the cotangent's shape
// and 2-norm (--json: every element as decimal strings); with --samples N the values and
// cotangents are summed over the samples (the gradient of Σₖ ⟨1, fₖ⟩). E0542 when the entry
// has nothing to differentiate (no real result, or no real argument or parameter read).
int run_gradient(const PreparedRun& prepared, const GradientRunOptions& options,
                 const GlobalOptions& global);

}  // namespace presk::cli
