// Decode runs (chip_decode.h).
#include "solve/chip_decode.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "generate/generate.h"

namespace presk::solve {

DecodeRuns::DecodeRuns(const ir::Program& program, const reference::ParameterStore& weights,
                       const exec::native::Realization& realization, const std::vector<int64_t>& in_sample,
                       const std::vector<int64_t>& held_out, int64_t steps, long bits, int threads,
                       const Progress& progress)
    : program_(program), weights_(weights), realization_(realization), threads_(threads) {
  if (progress) {
    progress(fmt::format("exact reference: {} decode run(s) in sample and {} held out, {} steps each, at {} bits",
                         in_sample.size(), held_out.size(), steps, bits));
  }
  for (int64_t start : in_sample) in_sample_.push_back(exact_run(start, steps, bits));
  for (int64_t start : held_out) held_out_.push_back(exact_run(start, steps, bits));
}

DecodeRuns::Run DecodeRuns::exact_run(int64_t start, int64_t steps, long bits) const {
  Run run;
  const std::unique_ptr<generate::Stepper> exact = generate::exact_stepper(program_, weights_, bits);
  int64_t token = start;
  for (int64_t s = 0; s < steps; ++s) {
    run.tokens.push_back(token);
    run.logits.push_back(exact->step(token));
    token = generate::choose(run.logits.back(), generate::Sampling{}, s);  // greedy
  }
  return run;
}

precision::MeasuredGap DecodeRuns::measure(const ir::Program& chip, bool held_out) {
  const generate::NativeModel model = generate::prepare_native(chip, weights_, realization_, threads_);
  precision::MeasuredGap gap;
  for (const Run& run : held_out ? held_out_ : in_sample_) {
    const std::unique_ptr<generate::Stepper> native = generate::native_stepper(model);
    for (size_t s = 0; s < run.tokens.size(); ++s) {
      const std::vector<double> logits = native->step(run.tokens[s]);
      for (size_t i = 0; i < logits.size(); ++i) {
        const double exact = run.logits[s][i], got = logits[i];
        const double difference = got == exact ? 0 : std::isnan(got - exact) ? std::numeric_limits<double>::infinity()
                                                                            : std::fabs(got - exact);
        gap.absolute = std::max(gap.absolute, difference);
        if (std::isfinite(exact)) gap.magnitude = std::max(gap.magnitude, std::fabs(exact));
      }
    }
  }
  return gap;
}

double DecodeRuns::magnitude() const {
  double largest = 0;
  for (const Run& run : in_sample_) {
    for (const std::vector<double>& logits : run.logits) {
      for (double x : logits) {
        if (std::isfinite(x)) largest = std::max(largest, std::fabs(x));
      }
    }
  }
  return largest;
}

}  // namespace presk::solve
