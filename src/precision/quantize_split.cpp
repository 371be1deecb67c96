// The representation/arithmetic split (quantize_split.h).
#include "precision/quantize_split.h"

#include <cmath>
#include <limits>

#include "exec/native/executor.h"
#include "precision/quant_axis.h"
#include "support/diagnostics.h"

namespace presk::precision {
namespace {

using Exact = reference::Value<reference::MpfrArith>;

// max |a − b| (computed exactly, then rounded) and max |a| over every element of every result.
MeasuredGap exact_gap(const ExactOutputs& a, const ExactOutputs& b) {
  const reference::MpfrArith arith(a.bits);
  Exact scratch = Exact::make_real(arith, {1});
  MeasuredGap gap;
  for (size_t k = 0; k < a.samples.size(); ++k) {
    for (size_t r = 0; r < a.samples[k].size(); ++r) {
      const Exact& x = a.samples[k][r];
      const Exact& y = b.samples[k][r];
      if (!x.is_real()) continue;
      for (int64_t i = 0; i < x.size(); ++i) {
        gap.magnitude = std::max(gap.magnitude, std::fabs(arith.to_double(x.real(i))));
        arith.sub(scratch.real(0), x.real(i), y.real(i));
        const double d = std::fabs(arith.to_double(scratch.real(0)));
        gap.absolute = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(gap.absolute, d);
      }
    }
  }
  return gap;
}

double bytes_under(const ir::Param& param, const exec::native::Realization& realization) {
  if (const exec::native::QuantSpec* spec = realization.param_quant(param.path)) {
    return bytes_at_rest(param, spec->bits, spec->over, spec->group);
  }
  using exec::native::RealType;
  const RealType type = realization.param_type(param.path);
  return bytes_at_rest(param, type == RealType::f64 ? 64 : type == RealType::f32 ? 32 : 16, 0);
}

}  // namespace

reference::ParameterStore stored_parameters(const ir::Program& program,
                                            const exec::native::Realization& realization,
                                            const reference::ParameterStore& parameters) {
  const exec::native::PreparedParameters prepared = exec::native::prepare_parameters(
      program, realization, [&](const std::string& path) { return parameters.view(path); });
  reference::ParameterStore stored;
  for (const ir::Param& param : program.params) {
    const std::vector<double>* values = parameters.find(param.path);
    if (values == nullptr) continue;
    const exec::native::Value* at_rest = param.type.kind == ir::ElemKind::Real ? prepared.find(param.path) : nullptr;
    if (at_rest == nullptr) {
      stored.set(param.path, *values);
      continue;
    }
    std::vector<double> rest(values->size());
    for (size_t i = 0; i < rest.size(); ++i) rest[i] = exec::native::element(*at_rest, i);
    stored.set(param.path, std::move(rest));
  }
  return stored;
}

QuantizeSplit quantize_split(const ir::Program& program, const ir::Function& entry,
                             const exec::native::Realization& realization,
                             const reference::ParameterStore& parameters, int64_t count,
                             const SampleInputs& inputs, long bits, int threads) {
  return quantize_split(program, entry, program, entry, realization, parameters, count, inputs, bits, threads);
}

QuantizeSplit quantize_split(const ir::Program& program, const ir::Function& entry, const ir::Program& chip,
                             const ir::Function& chip_entry, const exec::native::Realization& realization,
                             const reference::ParameterStore& parameters, int64_t count,
                             const SampleInputs& inputs, long bits, int threads) {
  const reference::ParameterStore stored = stored_parameters(program, realization, parameters);
  const ExactOutputs on_true = run_exactly(program, entry, parameters, count, inputs, bits, threads);
  const ExactOutputs on_stored = run_exactly(chip, chip_entry, stored, count, inputs, bits, threads);
  QuantizeSplit split;
  split.representation = exact_gap(on_true, on_stored);
  split.arithmetic = measure_gap(chip, chip_entry, realization, parameters, count, inputs, on_stored, threads);
  split.total = measure_gap(chip, chip_entry, realization, parameters, count, inputs, on_true, threads);
  for (const ir::Param& param : program.params) {
    if (param.type.kind != ir::ElemKind::Real) continue;
    split.weight_bytes += bytes_under(param, realization);
    split.weight_bytes_f64 += bytes_at_rest(param, 64, 0);
  }
  return split;
}

}  // namespace presk::precision
