// The typing rule of every op: the dispatch by family and the rules of the elementwise,
// reduction, normalization, gather, loss, source and control families. The layout and
// contraction rules live in type_rules_layout.cpp.
#include "ir/type_rules.h"

#include <algorithm>
#include <sstream>

#include "ir/type_rules_detail.h"

namespace presk::ir {
namespace detail {

InferredType fail(const std::string& message) {
  return InferredType{std::nullopt, message};
}

InferredType give(ElemKind kind, std::vector<int64_t> shape) {
  Type type;
  type.kind = kind;
  type.shape = std::move(shape);
  return InferredType{std::move(type), {}};
}

std::string describe(const Type& type) {
  return type_to_string(type);
}

std::optional<std::string> check_axis(const Attrs& attrs, int rank, const char* what) {
  if (attrs.axes.size() != 1) {
    return std::string(what) + " takes exactly one axis in axes=[…], found " +
           std::to_string(attrs.axes.size());
  }
  int64_t axis = attrs.axes[0];
  if (axis < 0 || axis >= rank) {
    return std::string(what) + " axis " + std::to_string(axis) + " is outside the rank " +
           std::to_string(rank) + " of its operand";
  }
  return std::nullopt;
}

}  // namespace detail

namespace {

using detail::describe;
using detail::fail;
using detail::give;

bool is_arithmetic(ElemKind kind) {
  return kind != ElemKind::Bool;
}

// Which element kinds an elementwise op accepts.
enum class KindRule { RealOnly, Arithmetic, AnyComparable, Ordered, Where, Convert };

KindRule kind_rule(Op op) {
  switch (op) {
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::max:
    case Op::min:
    case Op::neg:
    case Op::abs:
    case Op::relu:
      return KindRule::Arithmetic;
    case Op::lt:
    case Op::le:
    case Op::gt:
    case Op::ge:
      return KindRule::Ordered;
    case Op::eq:
    case Op::ne:
      return KindRule::AnyComparable;
    case Op::where:
      return KindRule::Where;
    case Op::convert:
      return KindRule::Convert;
    default:
      return KindRule::RealOnly;
  }
}

// The broadcast shape of every operand, or an error naming the two that clash.
InferredType broadcast_all(const std::vector<Type>& operands, ElemKind kind) {
  std::vector<int64_t> shape = operands[0].shape;
  for (size_t i = 1; i < operands.size(); ++i) {
    auto joined = broadcast_shapes(shape, operands[i].shape);
    if (!joined) {
      return fail("operand shapes " + shape_text(shape) + " and " +
                  shape_text(operands[i].shape) +
                  " do not broadcast (an axis differs and neither is 1)");
    }
    shape = std::move(*joined);
  }
  return give(kind, std::move(shape));
}

// convert: the same shape, the declared kind; R never converts to Z or B (not exact).
InferredType convert_rule(const Type& operand, const TypeRuleContext& context) {
  if (!context.declared) return fail("convert needs its declared result kind");
  ElemKind to = context.declared->kind;
  if (operand.kind == ElemKind::Real && to != ElemKind::Real) {
    return fail("convert from R to " + std::string(elem_kind_name(to)) + " is not exact");
  }
  if (operand.kind == ElemKind::Int && to == ElemKind::Bool) {
    return fail("convert from Z to B is not defined (compare with ne instead)");
  }
  return give(to, operand.shape);
}

InferredType elementwise_rule(Op op, const std::vector<Type>& operands,
                              const TypeRuleContext& context) {
  KindRule rule = kind_rule(op);
  if (rule == KindRule::Convert) return convert_rule(operands[0], context);
  if (rule == KindRule::Where) {
    if (operands[0].kind != ElemKind::Bool) {
      return fail("where's condition must be B, found " + describe(operands[0]));
    }
    if (operands[1].kind != operands[2].kind) {
      return fail("where's branches differ in kind: " + describe(operands[1]) + " and " +
                  describe(operands[2]));
    }
    return broadcast_all(operands, operands[1].kind);
  }
  ElemKind kind = operands[0].kind;
  for (const Type& operand : operands) {
    if (operand.kind != kind) {
      return fail("operands differ in element kind: " + describe(operands[0]) + " and " +
                  describe(operand));
    }
  }
  bool accepted = rule == KindRule::RealOnly        ? kind == ElemKind::Real
                  : rule == KindRule::AnyComparable ? true
                                                    : is_arithmetic(kind);
  if (!accepted) {
    return fail(std::string(op_name(op)) + " is not defined on " + elem_kind_name(kind) +
                " operands");
  }
  bool comparison = rule == KindRule::Ordered || rule == KindRule::AnyComparable;
  return broadcast_all(operands, comparison ? ElemKind::Bool : kind);
}

InferredType dropout_rule(const Type& operand, const Attrs& attrs) {
  if (operand.kind != ElemKind::Real) return fail("dropout needs an R operand");
  if (!(attrs.rate >= 0 && attrs.rate < 1)) {
    return fail("dropout rate must lie in [0, 1), found " + std::to_string(attrs.rate));
  }
  return give(ElemKind::Real, operand.shape);
}

// Reductions keep each reduced axis with size 1; axes must be strictly increasing.
InferredType reduction_rule(Op op, const Type& operand, const Attrs& attrs) {
  if (operand.kind == ElemKind::Bool || (op == Op::mean && operand.kind != ElemKind::Real)) {
    return fail(std::string(op_name(op)) + " is not defined on " + describe(operand));
  }
  if (attrs.axes.empty()) return fail("a reduction needs at least one axis in axes=[…]");
  std::vector<int64_t> shape = operand.shape;
  int64_t previous = -1;
  for (int64_t axis : attrs.axes) {
    if (axis < 0 || axis >= operand.rank()) {
      return fail("reduction axis " + std::to_string(axis) + " is outside the rank " +
                  std::to_string(operand.rank()) + " of " + describe(operand));
    }
    if (axis <= previous) return fail("reduction axes must be strictly increasing");
    previous = axis;
    shape[static_cast<size_t>(axis)] = 1;
  }
  return give(operand.kind, std::move(shape));
}

InferredType normalization_rule(Op op, const Type& operand, const Attrs& attrs) {
  if (operand.kind != ElemKind::Real) {
    return fail(std::string(op_name(op)) + " needs an R operand, found " + describe(operand));
  }
  if (auto problem = detail::check_axis(attrs, operand.rank(), op_name(op))) return fail(*problem);
  if (op == Op::quantize) {  // along the last axis, in blocks of starts[0] (ops.def)
    const int64_t extent = operand.shape.back();
    if (attrs.axes[0] != operand.rank() - 1) return fail("quantize takes its operand's last axis");
    if (attrs.starts.size() != 1 || attrs.starts[0] < 1 || extent % attrs.starts[0] != 0) {
      return fail("quantize needs starts=[b], a block b ≥ 1 that divides the last axis's " + std::to_string(extent));
    }
    if (attrs.spec.empty()) return fail("quantize needs spec=\"scale/words\" (\"absmax/one\")");
  }
  return give(ElemKind::Real, operand.shape);
}

// quantize(p : R[..., keys], v : R[...]) spec="weights|…" → R[..., keys]: an attention's weights
// each taken times its value row's scale (ops.def), in tiles of starts[0] keys.
InferredType attention_weights_rule(const std::vector<Type>& operands, const Attrs& attrs) {
  if (operands.size() != 2) return fail("quantize takes one operand, or two (weights and values)");
  if (operands[0].kind != ElemKind::Real || operands[1].kind != ElemKind::Real || operands[0].shape.empty() ||
      operands[1].shape.empty()) {
    return fail("quantize(weights, values) needs two R operands with axes");
  }
  if (auto problem = detail::check_axis(attrs, operands[0].rank(), "quantize")) return fail(*problem);
  const int64_t keys = operands[0].shape.back();
  if (attrs.axes[0] != operands[0].rank() - 1) return fail("quantize takes its operand's last axis");
  if (attrs.starts.size() != 1 || attrs.starts[0] < 1 || keys % attrs.starts[0] != 0) {
    return fail("quantize needs starts=[b], a tile b ≥ 1 that divides the weights' last axis's " + std::to_string(keys));
  }
  if (!attrs.spec.starts_with("weights|")) return fail("quantize of weights and values needs spec=\"weights|…\"");
  return give(ElemKind::Real, operands[0].shape);
}

// embed(table : R[N, rest...], index : Z[idx...]) → R[idx..., rest...]
InferredType embed_rule(const Type& table, const Type& index) {
  if (table.kind != ElemKind::Real || table.rank() < 1) {
    return fail("embed's table must be R with at least one axis, found " + describe(table));
  }
  if (index.kind != ElemKind::Int) {
    return fail("embed's index must be Z, found " + describe(index));
  }
  std::vector<int64_t> shape = index.shape;
  shape.insert(shape.end(), table.shape.begin() + 1, table.shape.end());
  return give(ElemKind::Real, std::move(shape));
}

// cross_entropy(logits : R[..., V], targets : Z[...]) → R
InferredType cross_entropy_rule(const Type& logits, const Type& targets) {
  if (logits.kind != ElemKind::Real || logits.rank() < 1) {
    return fail("cross_entropy's logits must be R with at least one axis, found " +
                describe(logits));
  }
  std::vector<int64_t> positions(logits.shape.begin(), logits.shape.end() - 1);
  if (targets.kind != ElemKind::Int || targets.shape != positions) {
    return fail("cross_entropy's targets must be Z" + shape_text(positions) +
                " (the logits without their last axis), found " + describe(targets));
  }
  return give(ElemKind::Real, {});
}

InferredType literal_rule(const Attrs& attrs, const TypeRuleContext& context) {
  ElemKind kind = context.declared ? context.declared->kind : ElemKind::Real;
  if (!is_real_literal(attrs.literal)) {
    return fail("literal \"" + attrs.literal + "\" is not a decimal number (or a quotient N/D of two)");
  }
  if (kind == ElemKind::Bool) return fail("a literal is R or Z, not B");
  if (kind == ElemKind::Int && !is_integer_literal(attrs.literal)) {
    return fail("Z literal \"" + attrs.literal + "\" is not an integer within 64 bits");
  }
  return give(kind, {});
}

InferredType iota_rule(const Attrs& attrs, const TypeRuleContext& context) {
  if (!context.declared) return fail("iota needs its declared shape");
  if (auto problem = detail::check_axis(attrs, context.declared->rank(), "iota")) {
    return fail(*problem);
  }
  return give(ElemKind::Int, context.declared->shape);
}

// param: the parameter's type without its leading stack axes.
InferredType param_rule(const TypeRuleContext& context) {
  if (!context.param) return fail("param needs its resolved parameter");
  const Param& param = *context.param;
  if (param.stack_depth < 0 || param.stack_depth > param.type.rank()) {
    return fail("parameter `" + param.path + "` has stack depth " +
                std::to_string(param.stack_depth) + " beyond its rank");
  }
  std::vector<int64_t> shape(param.type.shape.begin() + param.stack_depth, param.type.shape.end());
  return give(param.type.kind, std::move(shape));
}

InferredType signature_mismatch(const Function& callee, size_t i, const Type& given) {
  return fail("argument " + std::to_string(i) + " of `" + callee.name + "` is " +
              describe(callee.argument_types[i]) + ", given " + describe(given));
}

// The arguments given to `callee` match its signature, or the mismatch.
std::optional<InferredType> check_signature(const Function& callee,
                                            const std::vector<Type>& operands) {
  if (operands.size() != callee.argument_types.size()) {
    return fail("`" + callee.name + "` takes " + std::to_string(callee.argument_types.size()) +
                " arguments, given " + std::to_string(operands.size()));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!(operands[i] == callee.argument_types[i]))
      return signature_mismatch(callee, i, operands[i]);
  }
  return std::nullopt;
}

// The types of the callee's results, or nullopt when one refers to nothing.
std::optional<std::vector<Type>> result_types(const Function& callee) {
  std::vector<Type> types;
  for (ValueRef returned : callee.results) {
    size_t defined = returned.kind == ValueRef::Kind::Argument ? callee.argument_types.size()
                                                               : callee.lets.size();
    if (returned.index >= defined) return std::nullopt;
    types.push_back(callee.type_of(returned));
    types.back().axes.clear();
  }
  return types;
}

// `type` with a leading stack axis of `layers`.
Type stacked(const Type& type, int64_t layers) {
  Type out = type;
  out.axes.clear();
  out.shape.insert(out.shape.begin(), layers);
  return out;
}

// fold_trace: a fold that also stacks, per layer, its input (a callee x → x) or the callee's
// further results (x → (x, r…)); the layer count is the declared tuple's (the verifier checks
// it against the stack).
InferredType fold_trace_rule(const std::vector<Type>& results, const TypeRuleContext& context) {
  const Type* declared = context.declared;
  const size_t stacks = std::max<size_t>(results.size() - 1, 1);
  if (!declared || declared->elements.size() != stacks + 1 || declared->elements[1].rank() < 1)
    return fail("fold_trace declares a tuple (result, stacked per-layer values…)");
  std::vector<Type> elements{results[0]};
  for (size_t k = 0; k < stacks; ++k) elements.push_back(stacked(results[results.size() == 1 ? 0 : k + 1], declared->elements[1].shape[0]));
  return InferredType{tuple_type(std::move(elements)), {}};
}

// fold_vjp(stacks [L, x…]…, cotangent c) with a callee (x…, c) → (c, p…) gives (c, [L, p]…):
// layer l's slice of each stack, then the carry, which need not be of a stack's layer type (a
// store split's rows hold more than the layer's argument).
InferredType fold_vjp_rule(const Function& callee, const std::vector<Type>& results,
                           const std::vector<Type>& operands) {
  if (operands.size() < 2) return fail("fold_vjp takes one stack or more and a cotangent");
  const int64_t layers = operands[0].rank() < 1 ? -1 : operands[0].shape[0];
  std::vector<Type> arguments;
  for (size_t k = 0; k + 1 < operands.size(); ++k) {
    const Type& stack = operands[k];
    if (stack.rank() < 1 || stack.shape[0] != layers) return fail("fold_vjp's stacks need one layer axis, of one extent");
    arguments.push_back(Type{stack.kind, {stack.shape.begin() + 1, stack.shape.end()}, {}, {}});
  }
  arguments.push_back(operands.back());
  if (auto wrong = check_signature(callee, arguments)) return *wrong;
  if (!(results[0] == operands.back()))
    return fail("fold_vjp's callee `" + callee.name + "` must return the input's cotangent first");
  std::vector<Type> elements{results[0]};
  for (size_t i = 1; i < results.size(); ++i) elements.push_back(stacked(results[i], layers));
  return InferredType{tuple_type(std::move(elements)), {}};
}

// scan(x, operands…) with attrs.axes the indices of the stacked operands (each [L, a…], layer
// l's slice passed), the others passed whole; the callee (x, a…) → (x, r…) gives x, or with
// further results the tuple (x, [L, r]…).
InferredType scan_rule(const Function& callee, const std::vector<Type>& results, const std::vector<Type>& operands,
                       const Attrs& attrs) {
  int64_t layers = -1;
  std::vector<Type> arguments = operands;
  for (size_t k = 0; k < attrs.axes.size(); ++k) {
    const int64_t i = attrs.axes[k];
    if (i < 1 || i >= static_cast<int64_t>(operands.size()) || (k > 0 && i <= attrs.axes[k - 1]))
      return fail("scan's axes=[…] lists stacked operands after the first, increasing");
    Type& stack = arguments[static_cast<size_t>(i)];
    if (stack.rank() < 1 || (layers >= 0 && stack.shape[0] != layers))
      return fail("scan's stacked operands need one layer axis, of one extent");
    layers = stack.shape[0];
    stack = Type{stack.kind, {stack.shape.begin() + 1, stack.shape.end()}, {}, {}};
  }
  if (auto wrong = check_signature(callee, arguments)) return *wrong;
  if (!(results[0] == operands[0]))
    return fail("scan's callee `" + callee.name + "` must return its first argument's type first");
  if (results.size() == 1) return give(results[0].kind, results[0].shape);
  if (layers < 0) return fail("scan stacks its callee's further results by a stacked operand's layers: name one in axes");
  std::vector<Type> elements{results[0]};
  for (size_t i = 1; i < results.size(); ++i) elements.push_back(stacked(results[i], layers));
  return InferredType{tuple_type(std::move(elements)), {}};
}

// get: element attrs.axes[0] of a tuple.
InferredType get_rule(const Type& tuple, const Attrs& attrs) {
  if (!tuple.is_tuple()) return fail("get reads a tuple, given " + describe(tuple));
  if (attrs.axes.size() != 1 || attrs.axes[0] < 0 ||
      attrs.axes[0] >= static_cast<int64_t>(tuple.elements.size()))
    return fail("get's index axes=[i] must name one of " +
                std::to_string(tuple.elements.size()) + " elements");
  Type element = tuple.elements[static_cast<size_t>(attrs.axes[0])];
  element.axes.clear();
  return InferredType{std::move(element), {}};
}

// call: arguments match the callee's, one result or a tuple of several; fold (and
// fold_trace): the callee maps its one type to itself (fold_trace: or to (itself, r…));
// fold_vjp: fold_vjp_rule.
InferredType control_rule(Op op, const std::vector<Type>& operands, const Attrs& attrs,
                          const TypeRuleContext& context) {
  if (op == Op::get) return get_rule(operands[0], attrs);
  if (!context.callee) return fail(std::string(op_name(op)) + " needs its resolved callee");
  const Function& callee = *context.callee;
  std::optional<std::vector<Type>> results = result_types(callee);
  if (!results || results->empty()) return fail("callee `" + callee.name + "` returns nothing defined");
  if (op == Op::fold_vjp) return fold_vjp_rule(callee, *results, operands);
  if (op == Op::scan) return scan_rule(callee, *results, operands, attrs);
  const bool traced_pair = op == Op::fold_trace && results->size() >= 2;  // x → (x, r…): each r stacked
  if (op != Op::call && results->size() != 1 && !traced_pair) {
    return fail("callee `" + callee.name + "` returns " + std::to_string(results->size()) +
                " values; a fold takes exactly one");
  }
  if (auto wrong = check_signature(callee, operands)) return *wrong;
  const Type& result = (*results)[0];
  if (op != Op::call && !(result == callee.argument_types[0])) {
    return fail("fold's callee `" + callee.name + "` must map its argument type " +
                describe(callee.argument_types[0]) + " to itself, returns " + describe(result));
  }
  if (op == Op::fold_trace) return fold_trace_rule(*results, context);
  if (results->size() > 1) return InferredType{tuple_type(std::move(*results)), {}};
  return give(result.kind, result.shape);
}

InferredType arity_problem(Op op, size_t count) {
  int arity = op_info(op).arity;
  if (arity >= 0 && count != static_cast<size_t>(arity)) {
    return fail(std::string(op_name(op)) + " takes " + std::to_string(arity) + " operands, given " +
                std::to_string(count));
  }
  if (arity < 0 && op != Op::call && count == 0) {
    return fail(std::string(op_name(op)) + " takes at least one operand");
  }
  return InferredType{Type{}, {}};
}

}  // namespace

InferredType infer_result_type(Op op, const std::vector<Type>& operands, const Attrs& attrs,
                               const TypeRuleContext& context) {
  if (static_cast<int>(op) >= op_count()) return fail("unknown op");
  if (InferredType arity = arity_problem(op, operands.size()); !arity) return arity;
  switch (op_info(op).family) {
    case OpFamily::Source:
      if (op == Op::literal) return literal_rule(attrs, context);
      if (op == Op::iota) return iota_rule(attrs, context);
      return param_rule(context);
    case OpFamily::Elementwise:
      if (op == Op::dropout) return dropout_rule(operands[0], attrs);
      return elementwise_rule(op, operands, context);
    case OpFamily::Reduction:
      return reduction_rule(op, operands[0], attrs);
    case OpFamily::Contraction:
      return detail::contract_rule(operands[0], operands[1], attrs);
    case OpFamily::Normalization:
      if (op == Op::quantize && operands.size() > 1) return attention_weights_rule(operands, attrs);
      return normalization_rule(op, operands[0], attrs);
    case OpFamily::Gather:
      return embed_rule(operands[0], operands[1]);
    case OpFamily::Layout:
      return detail::layout_rule(op, operands, attrs, context);
    case OpFamily::Loss:
      return cross_entropy_rule(operands[0], operands[1]);
    case OpFamily::Control:
      return control_rule(op, operands, attrs, context);
  }
  return fail("unknown op family");
}

std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b) {
  const std::vector<int64_t>& longer = a.size() >= b.size() ? a : b;
  const std::vector<int64_t>& shorter = a.size() >= b.size() ? b : a;
  std::vector<int64_t> shape = longer;
  size_t offset = longer.size() - shorter.size();
  for (size_t i = 0; i < shorter.size(); ++i) {
    int64_t x = longer[offset + i];
    int64_t y = shorter[i];
    if (x == y || y == 1) continue;
    if (x != 1) return std::nullopt;
    shape[offset + i] = y;
  }
  return shape;
}

}  // namespace presk::ir
