// The layer functions of a fold under `--remat store` (split_detail.h): a fold keeps one
// real vector per layer, its output and its residuals end to end (the row), which
// `fold_trace @B.fwd_layer` stacks (a callee x → (x, row)) and `fold_vjp` hands back to
// B.bwd_layer. Every value moves by slice, reshape and concat: exact copies.
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

ValueRef flat(Builder& build, ValueRef value) {
  return build.reshape(value, {build.type_of(value).element_count()});
}

ValueRef concat(Builder& build, std::vector<ValueRef> parts) {
  if (parts.size() == 1) return parts[0];
  ir::Attrs attrs;
  attrs.axes = {0};
  return build.emit(Op::concat, std::move(parts), attrs);
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

// B.fwd_layer(x) = (y, concat(B.fwd(x)…)): the next layer's input, and the row.
ir::Function fwd_layer(const ir::Function& folded, const ir::Function& fwd) {
  ir::Function out = signature(folded, fwd_layer_name(folded.name));
  out.argument_names = {"x"};
  out.argument_types = {folded.argument_types[0]};
  Builder build(out);
  std::vector<ValueRef> parts = build.results_of(call(build, fwd, {ValueRef::argument(0)}), fwd.results.size());
  const ValueRef y = parts[0];
  for (ValueRef& part : parts) part = flat(build, part);
  out.results = {y, concat(build, parts)};
  return out;
}

// B.bwd_layer(row, ȳ) = B.bwd(row's pieces…, ȳ): the carry is the cotangent of B's
// argument, at its own type.
ir::Function bwd_layer(const ir::Function& folded, const ir::Function& fwd, const ir::Function& bwd,
                       int64_t length) {
  ir::Function out = signature(folded, bwd_layer_name(folded.name));
  out.argument_names = {"row", "carry"};
  out.argument_types = {Type{ir::ElemKind::Real, {length}, {}, {}}, folded.argument_types[0]};
  Builder build(out);
  const ValueRef cotangent = ValueRef::argument(1);
  std::vector<ValueRef> operands;
  int64_t offset = 0;
  for (ValueRef result : fwd.results) {
    Type type = fwd.type_of(result);
    int64_t start = offset;
    offset += type.element_count();
    if (operands.empty() && !reads_argument(bwd, 0)) {  // the value, unread: any of its type
      operands.push_back(cotangent);
      continue;
    }
    operands.push_back(
        build.reshape(build.slice(ValueRef::argument(0), 0, start, offset), type.shape));
  }
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
  int64_t length = 0;
  for (ValueRef result : fwd->results) {
    const Type& type = fwd->type_of(result);
    if (type.kind != ir::ElemKind::Real || type.is_tuple()) return std::nullopt;
    length += type.element_count();
  }
  return SplitPair{fwd_layer(folded, *fwd), bwd_layer(folded, *fwd, *bwd, length)};
}

PackedFold emit_packed_fold(Builder& build, const ir::Program& program, const ir::Let& fold_trace,
                            ValueRef input) {
  const ir::Function* layer = program.find_function(fwd_layer_name(fold_trace.attrs.callee));
  internal_assert(layer != nullptr);
  const int64_t length = layer->type_of(layer->results.at(1)).element_count();
  const int64_t layers = fold_trace.type.elements.at(1).shape.at(0);
  ir::Attrs attrs = fold_trace.attrs;
  attrs.callee = layer->name;
  Type traced = ir::tuple_type({build.type_of(input), Type{ir::ElemKind::Real, {layers, length}, {}, {}}});
  ValueRef trace = build.emit(Op::fold_trace, {input}, attrs, &traced, layer);
  std::vector<ValueRef> parts = build.results_of(trace, 2);  // the fold's value; each layer's row
  return {parts[0], parts[1]};
}

std::vector<ValueRef> emit_packed_fold_vjp(Builder& build, const ir::Program& program,
                                           const ir::Let& fold_vjp, ValueRef rows,
                                           ValueRef cotangent) {
  const ir::Function* layer =
      program.find_function(bwd_layer_name(forward_of(fold_vjp.attrs.callee)));
  internal_assert(layer != nullptr);
  ir::Attrs attrs = fold_vjp.attrs;
  attrs.callee = layer->name;
  ValueRef reversed = build.emit(Op::fold_vjp, {rows, cotangent}, attrs, nullptr, layer);
  return build.results_of(reversed, layer->results.size());
}

}  // namespace presk::ad::split_detail
