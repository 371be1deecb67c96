// Adjoint rules of `param`, `call` and `fold`: a parameter's cotangent becomes a result of
// the vjp; a call runs its callee's vjp; a fold runs its callee's vjp once per layer, in
// reverse (fold_vjp), from the layer inputs its forward pass stacked (fold_trace).
#include <string>

#include "ad/rules.h"
#include "ad/vjp.h"
#include "support/diagnostics.h"

namespace presk::ad::rules {
namespace {

std::string join_path(const std::string& context, const std::string& path) {
  if (context.empty()) return path;
  if (path.empty()) return context;
  return context + "." + path;
}

// Hands the results of a callee's vjp to the caller: `$i` to operand i, a parameter path to
// the caller's parameter under the call's path.
void distribute(RuleContext& c, const ir::Function& vjp, const std::vector<ValueRef>& results) {
  for (size_t k = 0; k < results.size(); ++k) {
    const std::string& name = vjp.result_names[k];
    if (name.starts_with("$")) {
      size_t i = std::stoul(name.substr(1));
      if (c.wants(i)) c.contribute(i, results[k]);
    } else {
      c.contribute_param(join_path(c.let.attrs.path, name), results[k]);
    }
  }
}

}  // namespace

// d/dθ param θ = 1: ḡ is (a part of) the parameter's cotangent
void param(RuleContext& c) { c.contribute_param(c.let.attrs.path, c.cotangent); }

// d/dx f(x) applied to ḡ: f.vjp(x, ḡ), in the call's context
void call(RuleContext& c) {
  const ir::Function* vjp = c.program.find_function(vjp_name(c.let.attrs.callee));
  if (vjp == nullptr) return;  // the callee has nothing to differentiate
  std::vector<ValueRef> operands = c.operands;
  operands.push_back(c.cotangent);
  ir::Attrs attrs;
  attrs.callee = vjp->name;
  attrs.path = c.let.attrs.path;
  ValueRef called = c.build.emit(Op::call, operands, attrs, nullptr, vjp);
  distribute(c, *vjp, c.build.results_of(called, vjp->results.size()));
}

// y = f_{L−1} ∘ … ∘ f_0 (x): x̄ and each layer's θ̄ by f.vjp over the layers in reverse,
// x̄_l = f.vjp(x_l, x̄_{l+1}); θ̄ stacks one cotangent per layer
void fold(RuleContext& c) {
  const ir::Function* vjp = c.program.find_function(vjp_name(c.let.attrs.callee));
  internal_assert(vjp != nullptr && c.layer_inputs.has_value());
  internal_assert(!vjp->result_names.empty() && vjp->result_names[0] == "$0");
  ir::Attrs attrs;
  attrs.callee = vjp->name;
  attrs.path = c.let.attrs.path;
  ValueRef reversed = c.build.emit(Op::fold_vjp, {*c.layer_inputs, c.cotangent}, attrs, nullptr, vjp);
  distribute(c, *vjp, c.build.results_of(reversed, vjp->results.size()));
}

}  // namespace presk::ad::rules
