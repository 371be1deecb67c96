// The pieces of the fwd/bwd split (split.h) that its files share: the split of one function
// in each mode, and the layer functions through which a fold keeps its residuals.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ad/builder.h"
#include "ir/ir.h"

namespace presk::ad::split_detail {

struct SplitPair {
  ir::Function fwd;
  ir::Function bwd;
};

// Store: `F.fwd` and `F.bwd` of `function`, from `F.vjp` in `program` (which already holds
// the fwd, bwd and layer functions of F's callees where they exist).
SplitPair split_store(const ir::Program& program, const ir::Function& function);

// Recompute: `E.fwd` returns E's value and E's arguments; `E.bwd` is E.vjp's body.
SplitPair split_recompute(const ir::Program& program, const ir::Function& entry);

// Whether a let or a result of `function` reads its argument `index`.
bool reads_argument(const ir::Function& function, uint32_t index);

std::string fwd_layer_name(const std::string& function);  // "B.fwd_layer"
std::string bwd_layer_name(const std::string& function);  // "B.bwd_layer"

// The layer functions of a folded B, over its kept values: B.fwd's results (its value y, where
// B.bwd reads it, then the residuals r…), each at its own type:
//   B.fwd_layer(x) → (y, kept…): by `call @B.fwd` (a fold_trace callee of several results: the
//   fold carries y and stacks each kept value);
//   B.bwd_layer(kept…, carry : x's type) → (x̄, θ̄…): by `call @B.bwd` (a fold_vjp callee: one
//   argument per stack, then the carry, the cotangent of B's argument).
// nullopt when B.fwd returns something not real, or no residual (the fold then keeps only
// its layer inputs, and B.vjp recomputes each layer).
std::optional<SplitPair> layer_functions(const ir::Program& program, const ir::Function& folded);

// In a `.fwd`: the fold `fold_trace` of F.vjp (@B over `layers`) as `fold_trace
// @B.fwd_layer`; its value, and the stacks [L, …] of the kept values B.bwd_layer reads.
struct PackedFold {
  ValueRef value;
  std::vector<ValueRef> stacks;
};
PackedFold emit_packed_fold(Builder& build, const ir::Program& program, const ir::Let& fold_trace,
                            ValueRef input);

// In a `.bwd`: `fold_vjp @B.vjp` of F.vjp as `fold_vjp @B.bwd_layer` over `stacks`; the
// parts of the original's tuple (x̄, then each θ̄ stacked [L, …]).
std::vector<ValueRef> emit_packed_fold_vjp(Builder& build, const ir::Program& program,
                                           const ir::Let& fold_vjp, const std::vector<ValueRef>& stacks,
                                           ValueRef cotangent);

}  // namespace presk::ad::split_detail
