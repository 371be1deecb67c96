// Reverse mode split for training (docs/ad.md, "Training: .fwd, .bwd and --remat"): for an
// entry E, `E.fwd` runs the forward pass and returns E's value and the residuals the
// backward reads; `E.bwd` takes everything E.fwd returned and the cotangent, and returns
// exactly what `E.vjp` returns (the same names, the same values: identical bits on an
// executor that gives E.vjp's ops their bits, whatever the mode).
//
// Use (the program must hold E.vjp, so run add_vjps first):
//   ir::Program program = ad::add_fwd_bwd(ad::add_vjps(forward), "loss", ad::Remat::Store);
//   (value, r1…rk) = run "loss.fwd" on loss's arguments     // value: the loss
//   grads          = run "loss.bwd" on (value, r1…rk, cotangent)
//   grads[i] is named program.find_function("loss.bwd")->result_names[i]: "$i" for a real
//   argument, a parameter path for a parameter (stacked [L, …] under a fold), as for E.vjp.
// Both are entries, and their lets are sites like any other (`loss.bwd/%12`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/ir.h"

namespace presk::ad {

// What E.fwd keeps for E.bwd.
enum class Remat : uint8_t {
  // Every forward value the backward reads (not parameters, literals or iotas, which the
  // backward reads again): E.fwd calls `C.fwd` for each call the backward reverses and
  // hands its residuals up; a fold keeps each layer's output and residuals stacked [L, n]
  // (one real vector per layer); E.bwd runs no forward op. (A fold whose residuals are not
  // all real keeps only its layer inputs and recomputes each layer, as E.vjp does.)
  Store,
  // Only E's arguments: E.bwd is E.vjp, which recomputes the forward pass (each level
  // again inside its callees' vjps).
  Recompute,
};

// "store" or "recompute"; anything else is the user error E0812.
Remat parse_remat(std::string_view text);
const char* remat_name(Remat remat);

std::string fwd_name(const std::string& function);  // "F.fwd"
std::string bwd_name(const std::string& function);  // "F.bwd"

// The program with `entry.fwd` and `entry.bwd` added (and, for Store, `C.fwd`/`C.bwd` of
// every function C the entry reaches that has a vjp, and the layer functions
// `B.fwd_layer`/`B.bwd_layer` of each folded B), each right after its function's vjp.
// E0811: no entry `entry`; E0810: it has no vjp; E0813: a name it would add is taken.
// The result verifies (ir/verifier.h) whenever the program does.
ir::Program add_fwd_bwd(const ir::Program& program, const std::string& entry, Remat remat);

}  // namespace presk::ad
