// The measured gap and the bound's side inputs (measure.h).
#include "precision/measure.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/native/executor.h"
#include "exec/reference/interpreter.h"
#include "precision/exact_cache.h"
#include "support/diagnostics.h"
#include "support/number_format.h"
#include "support/ranks.h"

namespace presk::precision {
namespace {

using Exact = reference::Value<reference::MpfrArith>;


void add_roundings(double x, RoundingEnvelope& rounding) {
  // fl(x) and x lie within a factor 2 of each other, so each difference is exact (Sterbenz).
  rounding.f64 = std::max(rounding.f64, 0.0);  // x is a binary64 number
  rounding.f32 = std::max(rounding.f32, std::fabs(round_to(x, ElementType::f32) - x));
  rounding.bf16 = std::max(rounding.bf16, std::fabs(round_to(x, ElementType::bf16) - x));
}

}  // namespace

void add_gap(const reference::MpfrArith& arith, const Tensor& native, const Exact& exact,
             MeasuredGap& gap) {
  if (!exact.is_real()) {  // Z or B: integers, compared exactly, then rounded (max |exact| stays the reals')
    for (int64_t i = 0; i < exact.size(); ++i) {
      const int64_t e = exact.integers[i], n = native.get_integer(static_cast<uint64_t>(i));
      int64_t d = 0;
      const bool wide = __builtin_sub_overflow(n, e, &d);  // |n − e| ≥ 2^63: far apart anyway
      gap.absolute = std::max(gap.absolute, wide ? std::fabs(static_cast<double>(n) - static_cast<double>(e))
                                                 : static_cast<double>(d < 0 ? 0 - static_cast<uint64_t>(d) : static_cast<uint64_t>(d)));
    }
    return;
  }
  Exact scratch = Exact::make_real(arith, {2});
  for (int64_t i = 0; i < exact.size(); ++i) {
    const double value = native.get(static_cast<uint64_t>(i));
    const bool exact_infinite = mpfr_inf_p(exact.real(i)) != 0;
    // ±∞ (a masked score, a log-probability of 0) has no magnitude to scale a relative budget.
    if (!exact_infinite) gap.magnitude = std::max(gap.magnitude, std::fabs(arith.to_double(exact.real(i))));
    if (std::isinf(value) && exact_infinite) {
      // The same infinity is agreement, a gap of 0; the other infinity is none.
      if ((value > 0) != (mpfr_sgn(exact.real(i)) > 0)) gap.absolute = std::numeric_limits<double>::infinity();
      continue;
    }
    if (!std::isfinite(value)) {  // NaN against anything, ±∞ against a finite value
      gap.absolute = std::numeric_limits<double>::infinity();
      continue;
    }
    arith.set_double(scratch.real(0), value);
    arith.sub(scratch.real(1), scratch.real(0), exact.real(i));
    const double difference = std::fabs(arith.to_double(scratch.real(1)));
    // A NaN difference (the exact value is NaN or ±∞) is no agreement: +∞, never dropped.
    gap.absolute = std::isnan(difference) ? std::numeric_limits<double>::infinity()
                                          : std::max(gap.absolute, difference);
  }
}

ExactOutputs run_exactly(const ir::Program& program, const ir::Function& entry,
                         const reference::ParameterStore& parameters, int64_t count,
                         const SampleInputs& inputs, long bits, int threads) {
  reference::RunOptions options;
  options.bits = bits;
  options.threads = threads;
  reference::SampleArguments<reference::MpfrArith> arguments_of =
      [&](const reference::MpfrArith& arith, int64_t k) {
        std::vector<Exact> arguments;
        for (const reference::HostTensor& input : inputs(k))
          arguments.push_back(reference::to_value(arith, input));
        return arguments;
      };
  // Split across the ranks of a distributed run (support/ranks.h); one process: all its own.
  ranks::SampleShare share("exact reference: samples", count);
  const std::vector<int64_t>& mine = share.mine();
  std::vector<std::vector<Exact>> own = reference::run_samples<reference::MpfrArith>(
      program, entry, parameters, static_cast<int64_t>(mine.size()),
      [&](const reference::MpfrArith& arith, int64_t i) { return arguments_of(arith, mine[i]); }, options);
  ExactOutputs exact;
  exact.bits = bits;
  if (!ranks::distributed()) {
    exact.samples = std::move(own);
    return exact;
  }
  exact.samples.resize(static_cast<size_t>(count));
  for (size_t i = 0; i < mine.size(); ++i) exact.samples[mine[i]] = std::move(own[i]);
  share.exchange([&](int64_t k) { return encode_exact_sample(exact.samples[k], bits); },
                 [&](int64_t k, std::string_view bytes) { exact.samples[k] = decode_exact_sample(bytes, bits); });
  return exact;
}

MeasuredGap measure_gap(const ir::Program& program, const ir::Function& entry,
                        const exec::native::Realization& realization,
                        const reference::ParameterStore& parameters, int64_t count,
                        const SampleInputs& inputs, const ExactOutputs& exact, int threads,
                        exec::native::PreparedCache* cache) {
  internal_assert(static_cast<int64_t>(exact.samples.size()) == count);
  const exec::native::PreparedParameters prepared = exec::native::prepare_parameters(
      program, realization, [&](const std::string& path) { return parameters.view(path); }, cache);
  const reference::MpfrArith arith(exact.bits);
  MeasuredGap gap;
  for (int64_t k = 0; k < count; ++k) {
    const std::vector<Tensor> native = exec::native::execute(
        program, entry.name, realization, reference::to_tensors(inputs(k)), prepared, {threads, false});
    internal_assert(native.size() == exact.samples[k].size());
    for (size_t r = 0; r < native.size(); ++r) add_gap(arith, native[r], exact.samples[k][r], gap);
  }
  return gap;
}

std::vector<ValueEnvelope> argument_envelopes(const ir::Function& entry, int64_t count,
                                              const SampleInputs& inputs) {
  std::vector<ValueEnvelope> arguments(entry.argument_types.size());
  for (int64_t k = 0; k < count; ++k) {
    const std::vector<reference::HostTensor> sample = inputs(k);
    internal_assert(sample.size() == arguments.size());
    for (size_t i = 0; i < sample.size(); ++i) {
      for (double x : sample[i].reals) {
        arguments[i].max_abs = std::max(arguments[i].max_abs, std::fabs(x));
        add_roundings(x, arguments[i].rounding);
      }
    }
  }
  return arguments;
}

std::map<std::string, double> parameter_errors(const ir::Program& program,
                                               const exec::native::Realization& realization,
                                               const reference::ParameterStore& parameters) {
  const exec::native::PreparedParameters prepared = exec::native::prepare_parameters(
      program, realization, [&](const std::string& path) { return parameters.view(path); });
  std::map<std::string, double> errors;
  for (const ir::Param& param : program.params) {
    if (param.type.kind != ir::ElemKind::Real) continue;
    const ParamView values = parameters.view(param.path);  // read in place, never widened whole
    const exec::native::Value* at_rest = prepared.find(param.path);
    internal_assert(values && at_rest != nullptr);
    double error = 0;
    values.for_each_block([&](uint64_t first, const double* block, uint64_t count) {
      for (uint64_t i = 0; i < count; ++i) {
        error = std::max(error, std::fabs(exec::native::element(*at_rest, first + i) - block[i]));
      }
    });
    errors[param.path] = error;
  }
  return errors;
}

}  // namespace presk::precision
