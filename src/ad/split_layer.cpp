// The layer functions of a fold under `--remat store` (split_detail.h): each layer's kept
// values (its output and residuals, each at its own type) are what `fold_trace
// @B.fwd_layer` stacks (a callee x → (x, kept…)) and `fold_vjp` hands back to B.bwd_layer,
// layer by layer. No value is copied but by the stacking itself.
#include "ad/split.h"
#include "ad/split_detail.h"
#include "ad/vjp.h"
#include "support/diagnostics.h"

namespace presk::ad::split_detail {
namespace {

// The name of the function a `.vjp` differentiates: "B" of "B.vjp".
std::string forward_of(const std::string& vjp) {
  internal_assert(vjp.ends_with(".vjp"));
  return vjp.substr(0, vjp.size() - 4);
}

ValueRef call(Builder& build, const ir::Function& callee, std::vector<ValueRef> operands) {
  ir::Attrs attrs;
  attrs.callee = callee.name;  // path "": the caller's own context (the layer's)
  return build.emit(Op::call, std::move(operands), attrs, nullptr, &callee);
}

ir::Function signature(const ir::Function& forward, std::string name) {
  ir::Function out;
  out.name = std::move(name);
  out.module = forward.module;
  out.span = forward.span;
  return out;
}

// The first of B.fwd's results a layer keeps: 0, or 1 where B.bwd does not read B's value.
size_t first_kept(const ir::Function& bwd) { return reads_argument(bwd, 0) ? 0 : 1; }

// B.fwd_layer(x) = (y, B.fwd(x)'s kept results…): the next layer's input, and what the fold
// stacks, each at its own type.
ir::Function fwd_layer(const ir::Function& folded, const ir::Function& fwd, const ir::Function& bwd) {
  ir::Function out = signature(folded, fwd_layer_name(folded.name));
  out.argument_names = {"x"};
  out.argument_types = {folded.argument_types[0]};
  Builder build(out);
  std::vector<ValueRef> parts = build.results_of(call(build, fwd, {ValueRef::argument(0)}), fwd.results.size());
  out.results = {parts[0]};
  out.results.insert(out.results.end(), parts.begin() + static_cast<long>(first_kept(bwd)), parts.end());
  return out;
}

// B.bwd_layer(kept…, ȳ) = B.bwd(y or, where B.bwd does not read it, ȳ, residuals…, ȳ): the
// carry is the cotangent of B's argument, at its own type.
ir::Function bwd_layer(const ir::Function& folded, const ir::Function& fwd, const ir::Function& bwd) {
  ir::Function out = signature(folded, bwd_layer_name(folded.name));
  const size_t first = first_kept(bwd);
  for (size_t k = first; k < fwd.results.size(); ++k) {
    out.argument_names.push_back("kept" + std::to_string(k - first));
    out.argument_types.push_back(fwd.type_of(fwd.results[k]));
  }
  out.argument_names.push_back("carry");
  out.argument_types.push_back(folded.argument_types[0]);
  Builder build(out);
  const ValueRef cotangent = ValueRef::argument(static_cast<uint32_t>(out.argument_types.size() - 1));
  std::vector<ValueRef> operands;
  if (first == 1) operands.push_back(cotangent);  // the value, unread: any of its type
  for (size_t k = first; k < fwd.results.size(); ++k) operands.push_back(ValueRef::argument(static_cast<uint32_t>(k - first)));
  operands.push_back(cotangent);
  out.results = build.results_of(call(build, bwd, operands), bwd.results.size());
  out.result_names = bwd.result_names;
  return out;
}

}  // namespace

bool reads_argument(const ir::Function& function, uint32_t index) {
  for (const ir::Let& let : function.lets)
    for (ValueRef operand : let.operands)
      if (operand == ValueRef::argument(index)) return true;
  for (ValueRef result : function.results)
    if (result == ValueRef::argument(index)) return true;
  return false;
}

std::string fwd_layer_name(const std::string& function) {
  return function + ".fwd_layer";
}
std::string bwd_layer_name(const std::string& function) {
  return function + ".bwd_layer";
}

std::optional<SplitPair> layer_functions(const ir::Program& program, const ir::Function& folded) {
  const ir::Function* fwd = program.find_function(fwd_name(folded.name));
  const ir::Function* bwd = program.find_function(bwd_name(folded.name));
  if (fwd == nullptr || bwd == nullptr || fwd->results.size() < 2 || bwd->results.size() < 2)
    return std::nullopt;
  if (folded.argument_types.size() != 1 || folded.argument_types[0].kind != ir::ElemKind::Real)
    return std::nullopt;
  for (ValueRef result : fwd->results) {
    const Type& type = fwd->type_of(result);
    if (type.kind != ir::ElemKind::Real || type.is_tuple()) return std::nullopt;
  }
  return SplitPair{fwd_layer(folded, *fwd, *bwd), bwd_layer(folded, *fwd, *bwd)};
}

PackedFold emit_packed_fold(Builder& build, const ir::Program& program, const ir::Let& fold_trace,
                            ValueRef input) {
  const ir::Function* layer = program.find_function(fwd_layer_name(fold_trace.attrs.callee));
  internal_assert(layer != nullptr);
  const int64_t layers = fold_trace.type.elements.at(1).shape.at(0);
  ir::Attrs attrs = fold_trace.attrs;
  attrs.callee = layer->name;
  std::vector<Type> elements{build.type_of(input)};
  for (size_t k = 1; k < layer->results.size(); ++k) {
    Type part = layer->type_of(layer->results[k]);
    part.shape.insert(part.shape.begin(), layers);
    part.axes.clear();
    elements.push_back(part);
  }
  Type traced = ir::tuple_type(elements);
  ValueRef trace = build.emit(Op::fold_trace, {input}, attrs, &traced, layer);
  std::vector<ValueRef> parts = build.results_of(trace, elements.size());  // the value; each kept part's stack
  return {parts[0], std::vector<ValueRef>(parts.begin() + 1, parts.end())};
}

std::vector<ValueRef> emit_packed_fold_vjp(Builder& build, const ir::Program& program,
                                           const ir::Let& fold_vjp, const std::vector<ValueRef>& stacks,
                                           ValueRef cotangent) {
  const ir::Function* layer =
      program.find_function(bwd_layer_name(forward_of(fold_vjp.attrs.callee)));
  internal_assert(layer != nullptr);
  ir::Attrs attrs = fold_vjp.attrs;
  attrs.callee = layer->name;
  std::vector<ValueRef> operands = stacks;
  operands.push_back(cotangent);
  ValueRef reversed = build.emit(Op::fold_vjp, std::move(operands), attrs, nullptr, layer);
  return build.results_of(reversed, layer->results.size());
}

}  // namespace presk::ad::split_detail
