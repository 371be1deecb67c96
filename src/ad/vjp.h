// Reverse-mode differentiation as a source transformation (docs/ad.md): for each function F
// of a program, `F.vjp` in the same IR, taking F's arguments and a cotangent of its result
// and returning the cotangents of F's real arguments and of every parameter F reads.
#pragma once

#include <string>

#include "ir/ir.h"

namespace presk::ad {

// "F.vjp".
std::string vjp_name(const std::string& function);

// The number of leading lets of `F.vjp` that are F's forward pass: F's lets in order, each
// `fold` made three (`fold_trace`, then `get` 0, its value, and `get` 1, its layer inputs).
// The reverse sweep follows them (src/ad/split.h reads the two parts apart).
size_t vjp_forward_length(const ir::Function& function);

// The program with `F.vjp` inserted right after each function F that has something to
// differentiate (a real result, and a real argument or a parameter read). A cotangent that
// reaches an op without an adjoint rule is a user error (E0800) naming the op and the site.
// The result verifies (ir/verifier.h) whenever the program does.
// Decode steps (docs/language.md, "State") are not differentiated: add_vjps skips each
// function with several results, a scan, cache_write or causal_mask_at, or a call of one.
// require_differentiable throws E1500 for such a function, naming what makes it one.
ir::Program add_vjps(const ir::Program& program);
void require_differentiable(const ir::Program& program, const std::string& function);

}  // namespace presk::ad
