// Decode (docs/language.md, "State: a decode step"): functions with several results, a fold
// that carries state (`fold blocks.decode over (x, cache, at)` → scan), cache_write and the
// causal mask of rows that start at a position.
#include <functional>

#include "lang/lower.h"

namespace presk::lang {
namespace {

bool same_type(const ir::Type& a, const ir::Type& b) { return a.kind == b.kind && a.shape == b.shape; }

std::string type_string(const ir::Type& type) { return ir::type_to_string(type); }

ir::Type without_names(ir::Type type) {
  type.axes.clear();
  return type;
}

bool is_z_scalar(const Value& value) { return value.type.kind == ir::ElemKind::Int && value.type.shape.empty(); }

}  // namespace

// let (a, b, …) = e: e gives as many results, each bound to its name by a `get`.
void FunctionLowerer::bind_results(const LetStmt& let, const Value& value) {
  // A value that did not lower (reported there) binds its names as not ok: what reads them
  // reports nothing more (no E0301 "unknown name" after an unbound dim's E0304).
  for (const std::string& name : let.names) locals_[name] = Value{};
  if (!value.ok) return;
  const size_t count = value.type.is_tuple() ? value.type.elements.size() : 1;
  if (count != let.names.size()) {
    report("E1503", let.loc,
           "let names " + std::to_string(let.names.size()) + " values, but the expression gives " + std::to_string(count),
           "name each result once: let (a, b) = f(x) for a function declared -> (A, B)");
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    ir::Attrs attrs;
    attrs.axes = {static_cast<int64_t>(i)};
    locals_[let.names[i]] = emit(ir::Op::get, without_names(value.type.elements[i]), {value}, std::move(attrs), let.loc);
  }
}

// The body's results: a tuple (a, b, …), or one call or fold that gives them all.
void FunctionLowerer::lower_results(const FnDecl& decl) {
  std::vector<Value> results;
  if (decl.result->kind == ExprKind::Tuple) {
    for (const ExprPtr& element : decl.result->as<TupleExpr>().elements) results.push_back(lower_expr(*element));
  } else {
    allow_tuple_ = true;
    Value value = lower_expr(*decl.result);
    if (!value.ok) return;
    for (size_t i = 0; value.type.is_tuple() && i < value.type.elements.size(); ++i) {
      ir::Attrs attrs;
      attrs.axes = {static_cast<int64_t>(i)};
      results.push_back(emit(ir::Op::get, without_names(value.type.elements[i]), {value}, std::move(attrs), decl.result->loc));
    }
    if (!value.type.is_tuple()) results.push_back(value);
  }
  for (const Value& result : results) {
    if (!result.ok) return;
  }
  if (results.size() != info_.result_types.size()) {
    report("E0322", decl.result->loc,
           "`" + decl.name + "` returns " + std::to_string(results.size()) + " values, but its signature declares " +
               std::to_string(info_.result_types.size()),
           "return one value per declared result type");
    return;
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (!same_type(results[i].type, info_.result_types[i])) {
      report("E0322", decl.result->loc,
             "result " + std::to_string(i) + " of `" + decl.name + "` is " + type_string(results[i].type) +
                 ", but its signature says " + type_string(info_.result_types[i]),
             "make the body's values match the declared result types");
      return;
    }
  }
  for (const Value& result : results) function_.results.push_back(result.ref);
}

// fold blocks.f over (x, s…): f(x, a…) → (x, r…) per layer, carrying x; an operand of f's
// argument type is passed whole to every layer, one with a leading axis of the stack's L layers
// is passed layer by layer. Gives x, or (x, each r stacked [L, …]).
Value FunctionLowerer::lower_scan(const FoldExpr& fold, const FunctionInfo& callee, const std::string& path,
                                  int64_t layers) {
  const auto& elements = fold.initial->as<TupleExpr>().elements;
  std::vector<Value> operands;
  for (const ExprPtr& element : elements) operands.push_back(lower_expr(*element));
  for (const Value& operand : operands) {
    if (!operand.ok) return Value{};
  }
  const std::string hint = "fold blocks.f over (x, s…) calls f(x, a…) -> (X, R…) per layer: each s is of a's type, "
                           "or stacked [L, a…]";
  if (operands.size() != callee.argument_types.size()) {
    report("E1504", fold.initial->loc,
           "`" + callee.ir_name + "` takes " + std::to_string(callee.argument_types.size()) + " arguments, the fold gives " +
               std::to_string(operands.size()),
           hint);
    return Value{};
  }
  if (!same_type(operands[0].type, callee.argument_types[0]) || !same_type(callee.result_type, callee.argument_types[0])) {
    report("E1504", elements[0]->loc,
           "the fold's state starts as " + type_string(operands[0].type) + "; `" + callee.ir_name + "` takes " +
               type_string(callee.argument_types[0]) + " and must return that type first",
           hint);
    return Value{};
  }
  ir::Attrs attrs;
  for (size_t i = 1; i < operands.size(); ++i) {
    const ir::Type& argument = callee.argument_types[i];
    if (same_type(operands[i].type, argument)) continue;
    ir::Type layer = operands[i].type;
    const bool stacked = layer.rank() >= 1 && layer.shape[0] == layers;
    if (stacked) layer.shape.erase(layer.shape.begin());
    if (!stacked || !same_type(layer, argument)) {
      report("E1504", elements[i]->loc,
             "argument `" + callee.argument_names[i] + "` of `" + callee.ir_name + "` is " + type_string(argument) +
                 "; the fold gives " + type_string(operands[i].type) + ", neither that nor it stacked by the " +
                 std::to_string(layers) + " layers",
             hint);
      return Value{};
    }
    attrs.axes.push_back(static_cast<int64_t>(i));
  }
  if (callee.result_types.size() > 1 && attrs.axes.empty()) {
    report("E1504", fold.initial->loc, "the fold stacks `" + callee.ir_name + "`'s further results by layer, but passes no stacked operand",
           hint);
    return Value{};
  }
  callees_.insert(callee.ir_name);
  attrs.callee = callee.ir_name;
  attrs.path = path;
  ir::Type type = callee.result_type;
  if (callee.result_types.size() > 1) {
    std::vector<ir::Type> tuple{without_names(callee.result_type)};
    for (size_t i = 1; i < callee.result_types.size(); ++i) {
      ir::Type stack = without_names(callee.result_types[i]);
      stack.shape.insert(stack.shape.begin(), layers);
      tuple.push_back(std::move(stack));
    }
    type = ir::tuple_type(std::move(tuple));
  }
  return emit(ir::Op::scan, std::move(type), operands, std::move(attrs), fold.loc);
}

// cache_write(cache, rows, at, axis: A): the cache with positions at … at+n−1 of axis A (default
// 0) replaced by the n rows.
Value lower_cache_write(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional,
                        const std::function<std::optional<int64_t>(const ir::Type&)>& axis_of) {
  Value cache = lowerer.lower_expr(*positional[0]);
  Value rows = lowerer.to_real(lowerer.lower_expr(*positional[1]), positional[1]->loc);
  Value at = lowerer.lower_expr(*positional[2], ir::ElemKind::Int);
  if (!cache.ok || !rows.ok || !at.ok) return Value{};
  const std::optional<int64_t> axis_given = axis_of(cache.type);
  if (!axis_given) return Value{};
  const int64_t axis = *axis_given;
  bool fits = cache.type.kind == ir::ElemKind::Real && rows.type.rank() == cache.type.rank() && axis < cache.type.rank();
  for (int64_t a = 0; fits && a < cache.type.rank(); ++a) {
    fits = a == axis ? rows.type.shape[a] <= cache.type.shape[a] : rows.type.shape[a] == cache.type.shape[a];
  }
  if (!fits) {
    lowerer.report("E1505", call.loc,
                   "cache_write's rows " + type_string(rows.type) + " do not fit the cache " + type_string(cache.type) +
                       " along axis " + std::to_string(axis),
                   "the rows have the cache's kind R and shape, except along the written axis");
    return Value{};
  }
  if (!is_z_scalar(at)) {
    lowerer.report("E1505", positional[2]->loc, "cache_write's position is a Z scalar, given " + type_string(at.type),
                   "declare the position `at : Z`");
    return Value{};
  }
  ir::Attrs attrs;
  attrs.axes = {axis};
  return lowerer.emit(ir::Op::cache_write, cache.type, {cache, rows, at}, std::move(attrs), call.loc);
}

// causal_mask(scores, at): over the last two axes [i, j], x where j ≤ at + i, −∞ elsewhere.
Value lower_causal_mask_at(FunctionLowerer& lowerer, const CallExpr& call, const Expr& operand, const Expr& position) {
  Value x = lowerer.to_real(lowerer.lower_expr(operand), call.loc);
  Value at = lowerer.lower_expr(position, ir::ElemKind::Int);
  if (!x.ok || !at.ok) return Value{};
  if (x.type.rank() < 2 || !is_z_scalar(at)) {
    lowerer.report("E1505", call.loc,
                   "causal_mask(x, at) takes x of rank 2 or more and a Z scalar position, given " + type_string(x.type) +
                       " and " + type_string(at.type));
    return Value{};
  }
  return lowerer.emit(ir::Op::causal_mask_at, x.type, {x, at}, {}, call.loc);
}

}  // namespace presk::lang
