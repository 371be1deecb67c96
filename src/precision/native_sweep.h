// `--sweep f64` (docs/precision.md): the envelope's statistics other than the exact outputs —
// every site's magnitudes, term sums and rounding per type, and the reverse sweep's
// sensitivities — measured on the native executor in binary64 instead of the exact reference.
// The native values are handed to the reference's own observers (reference/observer.h) as
// binary64 views, so each statistic has one implementation whichever evaluator feeds it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "exec/native/executor.h"
#include "exec/reference/observer.h"
#include "exec/reference/parameters.h"
#include "exec/reference/sensitivity.h"
#include "ir/ir.h"

namespace presk::precision {

// Which evaluator computes the statistics a measurement does not need: the exact reference at
// the envelope's bits (the default), or the native executor in binary64.
enum class Sweep { exact, f64 };

// "exact" or "f64"; parse_sweep: E1400 for anything else.
const char* sweep_name(Sweep sweep);
Sweep parse_sweep(const std::string& text);

// The parameters of `program` at rest in binary64 for the native executor (all-f64 realization).
exec::native::PreparedParameters binary64_parameters(const ir::Program& program,
                                                     const reference::ParameterStore& parameters);

// Runs `entry` of `program` natively, every value in binary64, on `inputs`, handing each let's
// value (and, when the observer asks, each sum's, mean's and contraction's term statistics) to
// `observer` as a binary64 view. Returns the entry's results.
std::vector<Tensor> observe_binary64(const ir::Program& program, const std::string& entry,
                                     const exec::native::PreparedParameters& parameters,
                                     const std::vector<reference::HostTensor>& inputs,
                                     reference::Observer& observer, int threads);

// reference::sensitivity, with the vjp run natively in binary64 (`program` holds the vjps).
// `stream`: each parameter's cotangent folded into its 1-norm as it is computed and freed
// (ExecuteOptions::cotangents), never all of them at once; the same bits as collected.
reference::Sensitivity binary64_sensitivity(const ir::Program& program, const std::string& entry,
                                            const exec::native::PreparedParameters& parameters,
                                            const std::vector<reference::HostTensor>& inputs, int threads,
                                            bool stream = true);

// The cotangents of the entry's vjp (seeded with ones) with respect to every parameter, by path,
// computed natively in binary64 (`program` holds the vjps): `--sweep f64` under `--quant`.
std::map<std::string, std::vector<double>> binary64_parameter_cotangents(
    const ir::Program& program, const std::string& entry, const exec::native::PreparedParameters& parameters,
    const std::vector<reference::HostTensor>& inputs, int threads);

}  // namespace presk::precision
