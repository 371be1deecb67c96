// The adjoint rule table (STYLE.md §7): one rule per primitive, each with its derivative in
// a comment. A rule reads the cotangent ḡ = ∂L/∂y of one forward let y = op(x…) and adds
// ∂L/∂x = ḡ·∂y/∂x to each operand's adjoint, emitting the lets that compute it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ad/builder.h"
#include "ir/ir.h"

namespace presk::ad {

// The adjoints accumulated during the reverse sweep of one function.
struct Adjoints {
  std::vector<std::optional<ValueRef>> of_let;       // per forward let
  std::vector<std::optional<ValueRef>> of_argument;  // per forward argument
  std::vector<std::string> param_paths;              // the parameters the function reads
  std::vector<Type> param_types;                     // their cotangents' types
  std::vector<std::optional<ValueRef>> of_param;     // per entry of param_paths
};

// What one rule sees: the forward let and its values in the vjp, the cotangent, and where
// its contributions go.
struct RuleContext {
  Builder& build;
  const ir::Program& program;    // the program with the vjps generated so far
  const ir::Let& let;            // the forward let
  ValueRef value;                // its value in the vjp
  std::vector<ValueRef> operands;  // its operands' values in the vjp
  ValueRef cotangent;            // ∂L/∂(let)
  std::optional<ValueRef> layer_inputs;  // fold: the stacked per-layer inputs
  Adjoints& adjoints;

  Type operand_type(size_t i) const { return build.type_of(operands[i]); }
  // Whether operand i takes a cotangent: real, and not a literal.
  bool wants(size_t i) const;
  // Adds `contribution` (of operand i's type) to operand i's adjoint.
  void contribute(size_t i, ValueRef contribution) const;
  // Adds `contribution` (of the let's broadcast shape) summed back to operand i's shape.
  void contribute_broadcast(size_t i, ValueRef contribution) const;
  // Adds a cotangent to the parameter at `path` (relative to the function's context).
  void contribute_param(const std::string& path, ValueRef contribution) const;
};

using Rule = void (*)(RuleContext&);

// The rule of `op`, or nullptr where the op has none.
Rule find_rule(Op op);

// `slot` += `contribution` (the first contribution is taken as it is).
void accumulate(Builder& build, std::optional<ValueRef>& slot, ValueRef contribution);

// The rules, by op family (rules_*.cpp); find_rule's table lists them.
namespace rules {
#define PRESK_AD_RULE(name) void name(RuleContext& c);
PRESK_AD_RULE(none)  // sources and ops whose operands take no cotangent
PRESK_AD_RULE(add) PRESK_AD_RULE(sub) PRESK_AD_RULE(mul) PRESK_AD_RULE(div)
PRESK_AD_RULE(max) PRESK_AD_RULE(min) PRESK_AD_RULE(neg) PRESK_AD_RULE(abs)
PRESK_AD_RULE(exp) PRESK_AD_RULE(log) PRESK_AD_RULE(sqrt) PRESK_AD_RULE(rsqrt)
PRESK_AD_RULE(tanh) PRESK_AD_RULE(gelu_tanh) PRESK_AD_RULE(gelu_erf) PRESK_AD_RULE(erf) PRESK_AD_RULE(relu)
PRESK_AD_RULE(sin) PRESK_AD_RULE(cos) PRESK_AD_RULE(atan)
PRESK_AD_RULE(where) PRESK_AD_RULE(convert) PRESK_AD_RULE(dropout)
PRESK_AD_RULE(sum) PRESK_AD_RULE(mean) PRESK_AD_RULE(reduce_max) PRESK_AD_RULE(contract)
PRESK_AD_RULE(softmax) PRESK_AD_RULE(log_softmax) PRESK_AD_RULE(cross_entropy)
PRESK_AD_RULE(embed) PRESK_AD_RULE(reshape) PRESK_AD_RULE(transpose) PRESK_AD_RULE(slice)
PRESK_AD_RULE(concat) PRESK_AD_RULE(broadcast) PRESK_AD_RULE(causal_mask)
PRESK_AD_RULE(param) PRESK_AD_RULE(call) PRESK_AD_RULE(fold)
#undef PRESK_AD_RULE
}  // namespace rules

}  // namespace presk::ad
