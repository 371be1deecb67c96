// The sensitivity hook of the reference (issue 6, item 5): runs an entry's generated vjp with an
// observer that, for each let marked `adjoint %n` (the complete adjoint of forward site %n,
// docs/ad.md), adds the 1-norm ‖∂L/∂v‖₁ of its value into that site's total, over every call
// and every layer, and keeps no adjoint. The sites marked on a vjp's cotangent argument get the
// total of the cotangents it was run with: the seed for the entry, the caller's adjoint of each
// call or fold site, and for a fold the x̄ each layer hands the one below.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exec/reference/interpreter.h"

namespace presk::reference {

struct Sensitivity {
  // Every let of every function that has a vjp in the program, by site name
  // ("LayerNorm.apply/%7"): Σ ‖∂L/∂v‖₁ in binary64, or nullopt where the sweep reached no
  // adjoint of the site (unknown, never 0): literals, integer-valued lets, sites that feed
  // nothing differentiable, and the sites of a function that is both called and folded and
  // whose adjoint is the cotangent (its layers could not be told apart).
  std::map<std::string, std::optional<double>> sites;
  // Per parameter path the vjp returns: ‖θ̄‖₁ of its cotangent (summed over its layers).
  std::map<std::string, double> parameters;
};

// The sweep's bookkeeping around any evaluator of the vjp: `run(vjp, observer)` runs `vjp`
// (`entry.vjp` of `program`) on the entry's arguments and a cotangent of ones, handing every
// let's value to `observer` (one let after another, in program order), and returns per result
// of the vjp the 1-norm of its value (each element rounded to binary64, added in order; 0 for an
// integer result). The reference's run (below) and the native executor's in binary64
// (`--sweep f64`, precision/native_sweep.h) both go through it.
using VjpRun = std::function<std::vector<double>(const ir::Function& vjp, Observer& observer)>;
Sensitivity sensitivity_of_run(const ir::Program& program, const std::string& entry, const VjpRun& run);

// Runs `entry.vjp` of `program` (which must hold the vjps: ad::add_vjps) on `arguments` (the
// entry's) with a cotangent of ones, on MPFR at options.bits (options.observer is replaced).
Sensitivity sensitivity(const ir::Program& program, const std::string& entry,
                        const ParameterStore& parameters, std::vector<Value<MpfrArith>> arguments,
                        RunOptions options);

}  // namespace presk::reference
