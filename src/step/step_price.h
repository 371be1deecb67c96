// The predicted time of a training step under a realization (docs/step.md, "The predicted time
// of a step"), from the training program, the realization and a profile (profile/profile.h): no
// envelope and no run. Every function the step reaches runs a static number of times per step
// (the gradient function once per window of the batch; a `call` runs its callee as often as its
// function runs; a `fold`, `fold_trace` or `fold_vjp` L times as often, L the leading extent of
// the stack it folds over), and every let that computes a real value (exec::native::is_typable)
// costs its class's roofline at its site's type, T̂ = λ + max(W/π, Q/β) — W its elements times
// its primitive's weight (precision::arithmetic_weight), Q the bytes it writes and its operands'
// bytes — plus each operand edge between types (elements × the profile's edge cost a → b; a
// parameter, at the master type, read by a site of another type: its load cost), across calls
// too (an argument is the caller's operand, a call's result its callee's result value). AdamW
// adds kAdamWFlops operations and kAdamWAccesses accesses per parameter element at the master
// type. Not priced: dropout masks' bits, the walk between ops, the windows' gradient sum, the
// layers a fold stacks (fold_trace's stacks, read by fold_vjp's callee at the reader's type),
// the threads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "ir/ir.h"
#include "profile/profile.h"

namespace presk::step {

// AdamW per parameter element: m ← β₁m + (1−β₁)g (3), v ← β₂v + (1−β₂)g² (4), θ ← θ − η(m̂/(√v̂ + ε)
// + λθ) (5, the bias corrections folded in the scalars): 12 operations; reading θ, m, v, g and
// writing θ, m, v: 7 accesses.
inline constexpr double kAdamWFlops = 12;
inline constexpr double kAdamWAccesses = 7;

// Runs per step of every function reached from `entry` of `program` (a gradient program with
// its vjps), the entry running `windows` times: calls and folds counted statically.
std::map<std::string, double> step_runs(const ir::Program& program, const std::string& entry, double windows);

struct StepPrice {
  double seconds = 0;     // all of it, per step
  double lets = 0;        // the lets' rooflines
  double conversions = 0; // the edges' and loads' conversions
  double optimizer = 0;   // AdamW
};

// The predicted step of `program` (the entry compiled for training) under `realization` (its
// default type the master type), priced as measure_step runs it: the gradient program with
// `entry`'s vjps, split for store under a uniform realization, recomputing otherwise; `windows`
// windows per step.
StepPrice predict_step(const ir::Program& program, const std::string& entry,
                       const exec::native::Realization& realization, const profile::Profile& profile, double windows);

// The same on a gradient program already built: `entries` its functions run per window (the
// vjp, or fwd then bwd).
class StepPricer {
 public:
  StepPricer(const ir::Program& gradient_program, std::vector<std::string> entries, const profile::Profile& profile,
             double windows);
  StepPrice price(const exec::native::Realization& realization) const;

 private:
  const ir::Program& program_;  // the caller's: it outlives the pricer
  profile::Profile profile_;    // a copy
  std::vector<std::string> entries_;
  double windows_ = 1;
  double parameter_elements_ = 0, parameter_tensors_ = 0;
};

}  // namespace presk::step
