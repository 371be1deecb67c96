// The measurement behind `presk calibrate --precision` (DESIGN.md §6, docs/precision.md): runs
// an entry on the exact reference over N samples with an observer, and one reverse sweep, and
// fills the magnitude envelope (envelope.h) every bound is then conditional on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/reference/parameters.h"
#include "exec/reference/value.h"
#include "ir/ir.h"
#include "precision/envelope.h"
#include "precision/native_sweep.h"

namespace presk::precision {

// The data arguments of sample k of the calibration (k = 0 … samples − 1; the caller maps k to
// its data file or seed, offset included). Called from any thread, several at once.
using SampleInputs = std::function<std::vector<reference::HostTensor>(int64_t k)>;

struct CalibrationProgress {
  int64_t samples_done = 0;       // forward samples finished (in any order)
  int64_t samples = 0;            // forward samples in all
  bool sensitivity_done = false;  // the reverse sweep has finished (or there is none)
  double seconds = 0;             // since the calibration started
  // --sweep f64: samples whose exact output the reference has computed, of `samples` (the
  // statistics above are then the native executor's); 0 of 0 under the default sweep.
  int64_t exact_done = 0;
  int64_t exact = 0;
};

struct CalibrationOptions {
  long bits = 256;  // the reference's precision (E0501 outside [53, 2^20])
  int threads = 1;  // workers; the envelope does not depend on it
  // Called after each sample and after the sweep, one call at a time, from any thread.
  std::function<void(const CalibrationProgress&)> progress;
  // exact: every statistic from the reference at `bits`. f64: the sites' statistics and the
  // sensitivities from the native executor in binary64; the reference computes only the exact
  // outputs (output_max_abs, what a relative budget is scaled by).
  Sweep sweep = Sweep::exact;
};

// Runs `entry` of `program` (as compiled: no vjps) on `samples` samples, sample k on
// inputs(k), with the samples and the reverse sweep (the entry's vjp with a cotangent of ones,
// on sample 0: reference::sensitivity) in parallel over options.threads, and merges what the
// observer saw in sample order. Fills every measured field, program_hash, entry, samples,
// bits and date; the caller fills the provenance: program, bindings, data, seed, token_range,
// offset and weights. An entry with nothing to differentiate leaves every sensitivity unknown.
// Under Sweep::f64 the native runs come first (one after another, each over the threads), then
// the exact outputs; a site's rounding.f64 is then half a binary64 ulp of its largest value (the
// binary64 run cannot see its own rounding), its f32 and bf16 roundings those of its binary64
// values, and its term statistics those of its binary64 operands.
Envelope calibrate(const ir::Program& program, const std::string& entry,
                   const reference::ParameterStore& parameters, int64_t samples,
                   const SampleInputs& inputs, const CalibrationOptions& options);

// Arithmetic operations per element of `let` (a let of `function`), the table of
// docs/precision.md: 1 per basic operation, kTranscendentalWeight per exp, log, tanh or erf,
// a contraction of k terms 2k − 1, a sum k − 1, a mean k, and 0 for what only moves values
// (layout, gather, sources) or hands them on (call, fold: counted at the callee's sites).
constexpr double kTranscendentalWeight = 8;
double arithmetic_weight(const ir::Function& function, const ir::Let& let);

// k, the terms each output element of a sum, mean or contraction adds (0 for any other op).
int64_t term_count(const ir::Function& function, const ir::Let& let);

// max |fl_d(x) − x| for d = f64, f32, bf16 of one binary64 value (a parameter at rest), as in
// RoundingEnvelope: round to nearest even with each type's subnormals, +∞ on overflow.
RoundingEnvelope rounding_errors(double x);

// The current UTC time as ISO 8601, "2026-11-30T12:00:00Z".
std::string utc_date_now();

}  // namespace presk::precision
