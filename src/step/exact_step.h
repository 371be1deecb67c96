// The exact training step (docs/step.md): from a state (θ, m, v after t steps, binary64) and a
// batch of windows, the batch's mean gradient g by the reference interpreter (the entry's vjp in
// MPFR at `bits`, each window with the dropout masks of the native executor's key (seed, step,
// b)), then AdamW over the reals in MPFR at `bits`, θ′. What the measures need of it is kept:
// the update Δ = θ′ − θ and g rounded to binary64, the norms, and the storage floor of each type.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "exec/reference/arith_mpfr.h"
#include "support/tensor.h"
#include "train/adamw.h"
#include "train/batch_gradient.h"
#include "train/checkpoint.h"

namespace presk::step {

using exec::native::RealType;

// What one step is: the batch's windows (the entry's argument), the dropout key's seed and step
// (window b of the batch draws (seed, step, b), as train::batch_gradient), the learning rate of
// the step and AdamW's hyperparameters. The step's t is state.step + 1.
struct StepInput {
  std::vector<Tensor> rows;
  uint64_t seed = 0;
  int64_t step = 0;  // the dropout key's step, from 0 (state.step in a training run)
  double learning_rate = 0;
  train::AdamWOptions adamw;
};

// The storage floor of each master type: ‖round_T(θ′) − θ′‖₂ / ‖θ′ − θ‖₂, θ′ the exact one.
struct StorageFloors {
  double f64 = 0, f32 = 0, bf16 = 0;
  double of(RealType type) const { return type == RealType::f64 ? f64 : type == RealType::f32 ? f32 : bf16; }
};

struct ExactStep {
  long bits = 0;
  // Per parameter of the state's layout: Δ = θ′ − θ and g, each element rounded once to binary64.
  std::vector<std::vector<double>> update, gradient;
  // Per parameter: θ′ itself in MPFR at `bits` (for tests at two precisions; not stored).
  std::vector<reference::MpfrBuffer> theta_next;
  double theta_norm = 0, update_norm = 0, gradient_norm = 0;  // ‖θ‖₂, ‖θ′ − θ‖₂, ‖g‖₂ (exact, rounded once)
  StorageFloors floors;
  double seconds = 0;
};

// Called after each window's vjp on the reference: (windows done, windows).
using WindowProgress = std::function<void(int64_t, int64_t)>;

// The exact step of `state` on `input`. `gradient` is the training program with its vjps
// (train::make_gradient_program, any remat: the reference runs `E.vjp`). Windows run up to
// `threads` at a time, each on one thread: no result depends on `threads`.
ExactStep exact_step(const train::GradientProgram& gradient, const train::TrainState& state,
                     const StepInput& input, long bits, int threads, const WindowProgress& progress = {});

}  // namespace presk::step
