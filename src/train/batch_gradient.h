// One training step's numbers: the entry's loss and its gradient over a batch of windows, run
// by the native executor (`E` and `E.vjp`), and the validation loss (docs/training.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/native/executor.h"
#include "support/dropout_mask.h"
#include "train/checkpoint.h"

namespace presk::train {

// A program differentiated for training: `entry` (a scalar loss over one window) and either
// its vjp (recompute: `entry` gives the loss, `entry.vjp` the gradient, recomputing the
// forward values) or its split (store: `entry.fwd` gives the loss and the residuals,
// `entry.bwd` the gradient from them; src/ad/split.h). Both give the same bits.
struct GradientProgram {
  ir::Program program;  // with every vjp (ad::add_vjps), and the split for store
  std::string entry;
  std::string vjp;  // "loss.vjp"
  std::string fwd;  // "loss.fwd" under store; empty under recompute
  std::string bwd;  // "loss.bwd" under store
  // For each parameter of the layout, the gradient function's result holding its cotangent
  // (-1: none reaches it; its gradient is 0).
  std::vector<int> result_of_parameter;
};

// Differentiates `forward` (compiled for training) and finds the gradient's results.
// E1003 when the entry is not a scalar R loss with parameters to train.
GradientProgram make_gradient_program(const ir::Program& forward, const std::string& entry,
                                      const std::vector<ParameterState>& layout, bool store);

// The parameters of `state` as the native executor's, rounded once into `realization`'s types.
exec::native::PreparedParameters prepare(const ir::Program& program,
                                         const exec::native::Realization& realization,
                                         const TrainState& state);

struct BatchGradient {
  double loss = 0;  // the mean of the windows' losses: their binary64 sum in window order / B
  // Per parameter of the layout: the mean of the windows' gradients, summed in window order in
  // the master type's compute type (bf16: f32), divided by B once and rounded to the master type.
  std::vector<std::vector<double>> gradients;
};

// Window b of `rows` runs `entry` and `entry.vjp` (cotangent 1), or `entry.fwd` and
// `entry.bwd`, with the dropout key
// (seed, step, b), single-threaded, up to `threads` windows at a time: the result does not
// depend on `threads`. `profile` (when not null) gains every window's op times.
BatchGradient batch_gradient(const GradientProgram& gradient,
                             const exec::native::Realization& realization,
                             const exec::native::PreparedParameters& parameters,
                             const std::vector<Tensor>& rows, uint64_t seed, int64_t step,
                             RealType master, int threads, exec::native::OpProfile* profile = nullptr);

// The mean of `entry`'s value over `rows` (no dropout), each window on one thread, summed in
// binary64 in row order.
double mean_loss(const ir::Program& program, const std::string& entry,
                 const exec::native::Realization& realization,
                 const exec::native::PreparedParameters& parameters,
                 const std::vector<Tensor>& rows, int threads);

}  // namespace presk::train
