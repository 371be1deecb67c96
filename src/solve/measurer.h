// The measurements of a solve (the seed's "It verifies by measurement, not by the bound"): the
// exact reference's outputs on the envelope's samples and on the held-out ones, computed once
// per solve and in parallel over all of them (or read from the envelope's cache of them,
// precision/exact_cache.h), and the gap of any assignment run natively
// against them (precision::measure_gap), cached by assignment.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "exec/native/executor.h"
#include "precision/exact_cache.h"
#include "precision/measure.h"
#include "solve/estimate.h"

namespace presk::solve {

struct SampleSet {
  int64_t count = 0;
  precision::SampleInputs inputs;  // sample k = 0 … count − 1
};

// What measure_and_widen (verify.h) measures with: the entry's Measurer below, or the step
// solve's native steps against the step envelope's exact step (src/step/solve_step.cpp).
class Measurements {
 public:
  virtual ~Measurements() = default;
  virtual precision::MeasuredGap in_sample(const Offer& offer, const Assignment& assignment) = 0;
  virtual std::optional<precision::MeasuredGap> held_out(const Offer& offer, const Assignment& assignment) = 0;
};

class Measurer : public Measurements {
 public:
  using Progress = std::function<void(const std::string&)>;
  Measurer(const ir::Program& program, const ir::Function& entry, const reference::ParameterStore& parameters,
           SampleSet in_sample, SampleSet held_out, long bits, int threads, Progress progress,
           const precision::ExactCache* cache = nullptr);  // null: no cache

  // The gap of `assignment` on the envelope's samples / on the held-out ones (nullopt: none).
  precision::MeasuredGap in_sample(const Offer& offer, const Assignment& assignment) override;
  std::optional<precision::MeasuredGap> held_out(const Offer& offer, const Assignment& assignment) override;
  int64_t held_out_count() const { return held_out_.count; }
  // The exact outputs of the envelope's samples, as every in-sample gap is measured against.
  const precision::ExactOutputs& exact_in_sample() const { return exact_in_; }
  const precision::ExactOutputs& exact_held_out() const { return exact_out_; }

  double exact_seconds() const { return exact_seconds_; }
  bool exact_from_cache() const { return exact_from_cache_; }
  double native_seconds() const { return native_seconds_; }
  int native_runs() const { return native_runs_; }
  // Parameters prepared for the measurements so far (each again only when its type changed).
  uint64_t preparations() const { return prepared_.preparations(); }

 private:
  precision::MeasuredGap measure(const Offer& offer, const Assignment& assignment, bool held_out);

  const ir::Program& program_;
  const ir::Function& entry_;
  const reference::ParameterStore& parameters_;
  SampleSet in_sample_, held_out_;
  precision::ExactOutputs exact_in_, exact_out_;
  int threads_;
  Progress progress_;
  std::map<std::pair<bool, Assignment>, precision::MeasuredGap> cache_;
  exec::native::PreparedCache prepared_;  // the parameters as the last measurement prepared them
  double exact_seconds_ = 0, native_seconds_ = 0;
  int native_runs_ = 0;
  bool exact_from_cache_ = false;
};

}  // namespace presk::solve
