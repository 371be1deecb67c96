// The native step under a realization from a state, and its measures against the exact step
// (docs/step.md): the update gap ‖θ̂′ − θ′‖₂ / ‖θ′ − θ‖₂, the gradient gap ‖ĝ − g‖₂ / ‖g‖₂,
// and the storage floor of the realization's master type.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "step/exact_step.h"
#include "step/step_envelope.h"

namespace presk::step {

// The native step: train::batch_gradient then train::adamw_update, from `state` rounded once to
// the realization's default type (the master type: θ, m, v), as a training run under it steps.
struct NativeStep {
  std::vector<std::vector<double>> theta, gradient;  // θ̂′ and ĝ per parameter
  double loss = 0;
};
NativeStep native_step(const train::GradientProgram& gradient, const exec::native::Realization& realization,
                       const train::TrainState& state, const StepInput& input, int threads);

// ‖a − b‖₂ / ‖b‖₂ over every parameter's elements, in MPFR (0 when both are 0).
double relative_distance(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b);
// ‖a‖₂ over every parameter's elements, in MPFR, rounded once.
double norm_of(const std::vector<std::vector<double>>& a);
// The storage floors of a binary64 θ′ with update norm ‖Δ‖₂ (the native f64 yardstick's):
// ‖round_T(θ′) − θ′‖₂ / ‖Δ‖₂ for f32 and bf16; f64's is 0.
StorageFloors binary64_floors(const std::vector<std::vector<double>>& theta_next, double update_norm);
// ‖(θ̂′ − θ) − Δ‖₂ / ‖Δ‖₂ with θ̂′ − θ in MPFR (exact), Δ the exact update in binary64.
double update_gap(const std::vector<std::vector<double>>& theta_next, const train::TrainState& state,
                  const std::vector<std::vector<double>>& update);

struct StepMeasures {
  std::string realization;  // the argument: "f32" or "@file.json"
  RealType master = RealType::f64;
  double update_gap = 0, gradient_gap = 0, storage_floor = 0;
  double seconds = 0;  // the native step's wall time: one step, or time_steps' median
  double least = 0, greatest = 0;  // time_steps' spread (0 when timed once)
  int rounds = 1;
};

// The native step under `realization_argument` (a type name or @file.json, validated against
// `program` with its vjps: E0605 for sites of another program) from the envelope's state, on
// its batch and dropout key, measured against its exact step; the reference does not run.
// `program` is the entry compiled for training: E1251 when its hash is not the envelope's;
// E1252 for a realization that types or quantizes parameters (the optimizer's state).
// The mixed-precision recipe of the spec's table: every typable site of the training program with
// `entry`'s vjps in bf16, the default (master) type f32 — the optimizer in f32.
exec::native::Realization recipe_realization(const ir::Program& program, const std::string& entry);

// `argument` (a type name, "recipe", or @file.json) loaded against `program` (compiled for training) with
// the vjps of `entry`, and checked as a step's realization: E0605 for sites of another program,
// E1252 for one that types or quantizes parameters. Cheap: a command checks every --realize
// before the exact step runs.
exec::native::Realization load_step_realization(const ir::Program& program, const std::string& entry,
                                                const std::string& argument);

// E1251 when `program`'s hash is not the envelope's.
void check_envelope_program(const StepEnvelope& envelope, const ir::Program& program);

StepMeasures measure_step(const StepEnvelope& envelope, const ir::Program& program,
                          const std::string& realization_argument, int threads);

// The same with a realization already validated against the program with its vjps (the step
// solver's), named `name` in the result.
StepMeasures measure_step(const StepEnvelope& envelope, const ir::Program& program,
                          const exec::native::Realization& realization, const std::string& name, int threads);

// Times the native step under each of `measures`' realizations (arguments as measure_step takes
// them) in alternating rounds, one step per round (support/alternating.h), and sets each one's
// seconds to the median of its rounds, with the spread; `progress` after each round.
void time_steps(const StepEnvelope& envelope, const ir::Program& program, std::vector<StepMeasures>& measures,
                int rounds, int threads, const std::function<void(int)>& progress);

}  // namespace presk::step
