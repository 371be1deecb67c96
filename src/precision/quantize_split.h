// What only an exact reference can do for integer weights (docs/precision.md, "quantize"; the
// seed's "Integer weights"): split a realization's gap in two. The *representation* part is the
// exact denotation on the weights as the realization stores them (each rounded into its type,
// or dequantized to f32(q·s)) against the exact denotation on the true weights; the
// *arithmetic* part is the native run against the former; the *total* the native run against
// the latter. The parts need not add.
#pragma once

#include <cstdint>

#include "exec/native/realization.h"
#include "precision/measure.h"

namespace presk::precision {

struct QuantizeSplit {
  MeasuredGap representation;  // magnitude: max |exact on the true weights|
  MeasuredGap arithmetic;      // magnitude: max |exact on the stored weights|
  MeasuredGap total;
  double weight_bytes = 0;     // the real parameters at rest under the realization, scales included
  double weight_bytes_f64 = 0;
};

// The parameters as `realization` stores them at rest, as binary64 (exact: every stored value
// is a binary64 number).
reference::ParameterStore stored_parameters(const ir::Program& program,
                                            const exec::native::Realization& realization,
                                            const reference::ParameterStore& parameters);

QuantizeSplit quantize_split(const ir::Program& program, const ir::Function& entry,
                             const exec::native::Realization& realization,
                             const reference::ParameterStore& parameters, int64_t count,
                             const SampleInputs& inputs, long bits, int threads);

// The same split for a chip (`presk check --contract C --measure`): `chip` is `program` as the
// chip runs it (numerics::chip_program: its quantize lets), `chip_entry` its entry. The
// representation part is the exact denotation of `chip` (each quantize by its scheme's exact
// meaning) on the stored weights against that of `program` on the true weights; the arithmetic
// part the native run of `chip` against the former; the total against the latter.
QuantizeSplit quantize_split(const ir::Program& program, const ir::Function& entry, const ir::Program& chip,
                             const ir::Function& chip_entry, const exec::native::Realization& realization,
                             const reference::ParameterStore& parameters, int64_t count,
                             const SampleInputs& inputs, long bits, int threads);

}  // namespace presk::precision
