// AdamW with decoupled weight decay (Loshchilov & Hutter; PyTorch's torch.optim.AdamW), every
// operation rounded in the master type, the realization's default type (docs/training.md,
// "AdamW"). Master weights and both moments are held as binary64 vectors whose every value is
// a value of the master type.
#pragma once

#include <cstdint>
#include <span>

#include "exec/native/numeric.h"

namespace presk::train {

using exec::native::RealType;

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.99;
  double epsilon = 1e-8;
  double weight_decay = 0.1;  // λ, applied to the tensors `decays` says
};

// The scalars of one step t (from 1) at learning rate η, each computed exactly (MPFR) from the
// binary64 hyperparameters and rounded once to the master type:
//   b1 = β₁, c1 = 1 − β₁, b2 = β₂, c2 = 1 − β₂, eps = ε,
//   shrink = 1 − η·λ, step_size = η / (1 − β₁ᵗ), root_correction = √(1 − β₂ᵗ).
struct AdamWScalars {
  double b1 = 0, c1 = 0, b2 = 0, c2 = 0, eps = 0;
  double shrink = 1, step_size = 0, root_correction = 1;
};
AdamWScalars adamw_scalars(const AdamWOptions& options, double learning_rate, int64_t t,
                           RealType type);

// One step on one tensor, element by element, each operation rounded to nearest in the
// compute type of `type` (f64, f32; bf16 computes in f32 and rounds θ, m, v once to bf16):
//   m ← b1·m + c1·g
//   v ← b2·v + c2·(g·g)
//   θ ← θ·shrink                                   (only when `decay`)
//   θ ← θ − step_size · (m / (√v / root_correction + eps))
void adamw_update(const AdamWScalars& scalars, RealType type, bool decay, std::span<double> theta,
                  std::span<double> m, std::span<double> v, std::span<const double> gradient);

// Whether weight decay applies to a parameter: tensors of rank ≥ 2 per layer (matrices and
// embedding tables), not vectors (biases, layer-norm gains), as nanoGPT.
bool decays(int64_t rank, int stack_depth);

}  // namespace presk::train
