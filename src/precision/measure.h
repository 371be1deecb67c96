// What `presk check --measure` sets beside a bound: the largest elementwise gap between a
// realization's native execution and the exact reference over a set of samples; and what the
// bound needs that the envelope does not hold (the entry arguments' magnitudes, the
// parameters' representation errors at rest), computed from the same samples and values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/parameters.h"
#include "exec/reference/value.h"
#include "ir/ir.h"
#include "precision/bound.h"
#include "precision/calibrate.h"

namespace presk::exec::native {
class PreparedCache;
}  // namespace presk::exec::native

namespace presk::precision {

// (SampleInputs, calibrate.h: the entry's arguments of sample k, k = 0 … count − 1.)

// The exact reference's results of every sample, MPFR at `bits`.
struct ExactOutputs {
  long bits = 256;
  std::vector<std::vector<reference::Value<reference::MpfrArith>>> samples;
};
ExactOutputs run_exactly(const ir::Program& program, const ir::Function& entry,
                         const reference::ParameterStore& parameters, int64_t count,
                         const SampleInputs& inputs, long bits, int threads);

struct MeasuredGap {
  double absolute = 0;  // max |native − exact| over every element of every result and sample
                        // (computed exactly, then rounded); an element whose native and exact
                        // values are the same ±∞ agrees (0); NaN against anything, and ±∞
                        // against a finite value or the other infinity, is +∞
  double magnitude = 0;  // max |exact| over the same elements' finite exact values
  double relative() const { return magnitude > 0 ? absolute / magnitude : absolute; }
};

// Adds one result to `gap`: max |native − exact| over its elements (the difference taken
// exactly in MPFR, then rounded; 0 where both are the same ±∞; +∞ for any other element that
// is not finite on either side) and max |exact| over the finite exact values;
// a Z or B result adds its largest integer difference (exact, then rounded) and no magnitude.
void add_gap(const reference::MpfrArith& arith, const Tensor& native,
             const reference::Value<reference::MpfrArith>& exact, MeasuredGap& gap);

// Runs `entry` natively under `realization` on every sample and compares with `exact`. With a
// cache (one per `parameters`), only parameters whose type changed since the cache last saw
// them are prepared again.
MeasuredGap measure_gap(const ir::Program& program, const ir::Function& entry,
                        const exec::native::Realization& realization,
                        const reference::ParameterStore& parameters, int64_t count,
                        const SampleInputs& inputs, const ExactOutputs& exact, int threads,
                        exec::native::PreparedCache* prepared = nullptr);

// Per argument of the entry, over the samples: max|x| and max|fl_T(x) − x| for each type
// (zero for Z and B arguments).
std::vector<ValueEnvelope> argument_envelopes(const ir::Function& entry, int64_t count,
                                              const SampleInputs& inputs);

// Per real parameter: max |value at rest − w| under `realization`, from its values: rounded
// once into its type, or for integer weights f32(q·s) with the realization's scales.
std::map<std::string, double> parameter_errors(const ir::Program& program,
                                               const exec::native::Realization& realization,
                                               const reference::ParameterStore& parameters);

}  // namespace presk::precision
