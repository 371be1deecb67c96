// The primitives with a shape rule of their own: embed (gather rows), reshape, iota, transpose,
// concat, causal_mask, dropout, cross_entropy, einsum and where.
#include <algorithm>
#include <optional>

#include "lang/lower.h"

namespace presk::lang {
namespace {

std::string type_string(const ir::Type& type) { return ir::type_to_string(type); }

bool require_rank(FunctionLowerer& lowerer, Loc loc, const char* name, const Value& value, size_t rank) {
  if (!value.ok || value.type.shape.size() >= rank) return value.ok;
  lowerer.report("E0338", loc, std::string("`") + name + "` needs an operand of rank " + std::to_string(rank) +
                                   " or more, given " + type_string(value.type));
  return false;
}

bool require_kind(FunctionLowerer& lowerer, Loc loc, const std::string& what, const Value& value, ir::ElemKind kind) {
  if (!value.ok || value.type.kind == kind) return value.ok;
  lowerer.report("E0311", loc, what + " must be " + ir::elem_kind_name(kind) + ", given " + type_string(value.type),
                 kind == ir::ElemKind::Int ? "indices are integers: declare the argument Z[…]"
                                           : "compare values (a < b) to get B values");
  return false;
}

const ListExpr* require_list(FunctionLowerer& lowerer, const Expr& expr, const char* code, const char* what) {
  if (expr.kind == ExprKind::List) return &expr.as<ListExpr>();
  lowerer.report(code, expr.loc, std::string("expected a list: ") + what);
  return nullptr;
}

// The type of a list of extents ([T, H, D / H]) of element kind `kind`, its size checked; its
// axes named where an extent is a bare name. Nothing where an extent does not evaluate.
std::optional<ir::Type> list_type(FunctionLowerer& lowerer, const ListExpr& list, ir::ElemKind kind) {
  ir::Type type{kind, {}, {}};
  for (const ExprPtr& element : list.elements) {
    auto extent = lowerer.scope().eval_extent(*element);
    if (!extent) return std::nullopt;
    type.shape.push_back(*extent);
    type.axes.push_back(element->kind == ExprKind::Name ? element->as<NameExpr>().name : "");
  }
  if (!lowerer.scope().check_size(type, list.loc)) return std::nullopt;
  return type;
}

}  // namespace

// embed(table : R[N, …], index : Z[…]) → R[index…, …]: row index[i] of the table.
Value lower_embed(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional) {
  Value table = lowerer.to_real(lowerer.lower_expr(*positional[0]), call.loc);
  Value index = lowerer.lower_expr(*positional[1]);
  if (!require_rank(lowerer, call.loc, "embed", table, 1) ||
      !require_kind(lowerer, positional[1]->loc, "the index of `embed`", index, ir::ElemKind::Int))
    return Value{};
  ir::Type type = index.type;
  type.kind = ir::ElemKind::Real;
  type.axes.resize(type.shape.size());
  for (size_t i = 1; i < table.type.shape.size(); ++i) {
    type.shape.push_back(table.type.shape[i]);
    type.axes.push_back(i < table.type.axes.size() ? table.type.axes[i] : "");
  }
  return lowerer.emit(ir::Op::embed, type, {table, index}, {}, call.loc);
}

// reshape(x, [T, H, D / H]): the same elements in row-major order, in a new shape.
Value lower_reshape(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional) {
  Value x = lowerer.lower_expr(*positional[0]);
  const ListExpr* list = require_list(lowerer, *positional[1], "E0318", "reshape(x, [T, D])");
  if (!x.ok || !list) return Value{};
  const std::optional<ir::Type> shaped = list_type(lowerer, *list, x.type.kind);
  if (!shaped) return Value{};
  const ir::Type& type = *shaped;
  if (type.element_count() != x.type.element_count()) {
    lowerer.report("E0318", list->loc, "cannot reshape " + type_string(x.type) + " (" + std::to_string(x.type.element_count()) +
                                           " elements) to " + type_string(type) + " (" +
                                           std::to_string(type.element_count()) + ")",
                   "a reshape keeps the number of elements");
    return Value{};
  }
  return lowerer.emit(ir::Op::reshape, type, {x}, {}, call.loc);
}

// iota([T, D], axis: k): Z of that shape, each element its index along axis k (0 by default).
Value lower_iota(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional,
                 const Expr* axis_expr) {
  const ListExpr* list = require_list(lowerer, *positional[0], "E0318", "iota([T], axis: 0)");
  if (!list) return Value{};
  const std::optional<ir::Type> shaped = list_type(lowerer, *list, ir::ElemKind::Int);
  if (!shaped) return Value{};
  const ir::Type& type = *shaped;
  int64_t axis = 0;
  if (axis_expr) {
    auto resolved = lowerer.scope().eval_integer(*axis_expr);
    if (!resolved) return Value{};
    axis = *resolved < 0 ? *resolved + static_cast<int64_t>(type.shape.size()) : *resolved;
  }
  if (axis < 0 || axis >= static_cast<int64_t>(type.shape.size())) {
    lowerer.report("E0313", call.loc, "iota's axis is out of range for " + type_string(type),
                   "give an axis index 0 … rank−1 of the shape");
    return Value{};
  }
  ir::Attrs attrs;
  attrs.axes = {axis};
  return lowerer.emit(ir::Op::iota, type, {}, std::move(attrs), call.loc);
}

// transpose(x, [1, 0, 2]): result axis i is operand axis perm[i]; transpose(x) swaps the
// last two axes.
Value lower_transpose(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional) {
  Value x = lowerer.lower_expr(*positional[0]);
  if (!require_rank(lowerer, call.loc, "transpose", x, positional.size() == 1 ? 2 : 0)) return Value{};
  size_t rank = x.type.shape.size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
  if (positional.size() == 1) {
    std::swap(perm[rank - 1], perm[rank - 2]);
  } else {
    const ListExpr* list = require_list(lowerer, *positional[1], "E0319", "a permutation such as [1, 0, 2]");
    if (!list) return Value{};
    perm.clear();
    for (const ExprPtr& element : list->elements) {
      auto axis = lowerer.scope().eval_integer(*element);
      if (!axis) return Value{};
      perm.push_back(*axis);
    }
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (sorted.size() != rank || sorted[i] != static_cast<int64_t>(i)) {
        lowerer.report("E0319", list->loc, "not a permutation of the " + std::to_string(rank) + " axes of " + type_string(x.type),
                       "list each axis index 0 … rank−1 once");
        return Value{};
      }
    }
  }
  ir::Type type = x.type;
  type.axes.resize(rank);
  ir::Type result = type;
  for (size_t i = 0; i < rank; ++i) {
    result.shape[i] = type.shape[perm[i]];
    result.axes[i] = type.axes[perm[i]];
  }
  ir::Attrs attrs;
  attrs.axes = perm;
  return lowerer.emit(ir::Op::transpose, result, {x}, std::move(attrs), call.loc);
}

// concat(a, b, …, axis: k): joined along axis k (0 by default); other extents equal.
Value lower_concat(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional,
                   const Expr* axis_expr) {
  std::vector<Value> parts;
  for (const Expr* expr : positional) parts.push_back(lowerer.lower_expr(*expr));
  for (const Value& part : parts) {
    if (!part.ok) return Value{};
  }
  ir::Type type = parts[0].type;
  type.axes.resize(type.shape.size());
  int64_t axis = 0;
  if (axis_expr) {
    auto resolved = lowerer.scope().eval_integer(*axis_expr);
    if (!resolved) return Value{};
    axis = *resolved < 0 ? *resolved + static_cast<int64_t>(type.shape.size()) : *resolved;
  }
  if (axis < 0 || axis >= static_cast<int64_t>(type.shape.size())) {
    lowerer.report("E0313", call.loc, "concat's axis is out of range for " + type_string(type));
    return Value{};
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    const ir::Type& other = parts[i].type;
    bool fits = other.kind == type.kind && other.shape.size() == type.shape.size();
    for (size_t a = 0; fits && a < other.shape.size(); ++a) fits = static_cast<int64_t>(a) == axis || other.shape[a] == type.shape[a];
    if (!fits) {
      lowerer.report("E0321", positional[i]->loc, "cannot concatenate " + type_string(other) + " to " + type_string(parts[0].type) +
                                                      " along axis " + std::to_string(axis),
                     "operands have the same element kind, rank and extents except along the axis");
      return Value{};
    }
    type.shape[axis] += other.shape[axis];
  }
  type.axes[axis] = "";
  ir::Attrs attrs;
  attrs.axes = {axis};
  return lowerer.emit(ir::Op::concat, type, parts, std::move(attrs), call.loc);
}

// causal_mask(scores): over the last two axes [i, j], x where j ≤ i and −∞ where j > i.
Value lower_causal_mask(FunctionLowerer& lowerer, const CallExpr& call, const Expr& operand) {
  Value x = lowerer.to_real(lowerer.lower_expr(operand), call.loc);
  if (!require_rank(lowerer, call.loc, "causal_mask", x, 2)) return Value{};
  return lowerer.emit(ir::Op::causal_mask, x.type, {x}, {}, call.loc);
}

// dropout(x, rate): in a training run a seeded keep-mask scaled by 1/(1 − rate); otherwise
// nothing at all (x itself). The let's `path` is its id, the function and let index it is
// lowered at (FunctionLowerer::dropout_key): the training mask is keyed by it
// (support/dropout_mask.h), and the vjp's adjoint copies it.
Value lower_dropout(FunctionLowerer& lowerer, const CallExpr& call, const Expr& operand, const Expr& rate) {
  Value x = lowerer.to_real(lowerer.lower_expr(operand), call.loc);
  auto value = lowerer.scope().eval_real(rate);
  if (!value) return Value{};
  if (!(*value >= 0 && *value < 1)) {
    lowerer.report("E0334", rate.loc, "a dropout rate is in [0, 1), given " + std::to_string(*value));
    return Value{};
  }
  if (!lowerer.training() || !x.ok) return x;
  ir::Attrs attrs;
  attrs.rate = *value;
  attrs.path = lowerer.dropout_key();
  return lowerer.emit(ir::Op::dropout, x.type, {x}, std::move(attrs), call.loc);
}

// cross_entropy(logits : R[…, V], targets : Z[…]) → R: the mean of −log_softmax(logits)[target].
Value lower_cross_entropy(FunctionLowerer& lowerer, const CallExpr& call, const Expr& logits_expr, const Expr& targets_expr) {
  Value logits = lowerer.to_real(lowerer.lower_expr(logits_expr), call.loc);
  Value targets = lowerer.lower_expr(targets_expr);
  if (!require_rank(lowerer, call.loc, "cross_entropy", logits, 1) ||
      !require_kind(lowerer, targets_expr.loc, "the targets of `cross_entropy`", targets, ir::ElemKind::Int))
    return Value{};
  std::vector<int64_t> expected(logits.type.shape.begin(), logits.type.shape.end() - 1);
  if (targets.type.shape != expected) {
    lowerer.report("E0312", targets_expr.loc, "targets " + type_string(targets.type) + " do not match logits " +
                                                  type_string(logits.type),
                   "one target per row of logits: logits R[T, V] take targets Z[T]");
    return Value{};
  }
  return lowerer.emit(ir::Op::cross_entropy, ir::Type{ir::ElemKind::Real, {}, {}}, {logits, targets}, {}, call.loc);
}

// einsum("td,dv->tv", a, b): a contraction of two operands.
Value lower_einsum(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional) {
  if (positional[0]->kind != ExprKind::String) {
    lowerer.report("E0315", positional[0]->loc, "einsum's first argument is its spec, a string such as \"td,dv->tv\"");
    return Value{};
  }
  const std::string& spec = positional[0]->as<StringExpr>().text;
  Value a = lowerer.to_real(lowerer.lower_expr(*positional[1]), call.loc);
  Value b = lowerer.to_real(lowerer.lower_expr(*positional[2]), call.loc);
  if (!a.ok || !b.ok) return Value{};
  auto type = contract_type(lowerer, spec, a.type, b.type, call.loc);
  if (!type) return Value{};
  ir::Attrs attrs;
  attrs.spec = spec;
  attrs.spec.erase(std::remove(attrs.spec.begin(), attrs.spec.end(), ' '), attrs.spec.end());
  return lowerer.emit(ir::Op::contract, *type, {a, b}, std::move(attrs), call.loc);
}

// where(cond : B, a, b): a where cond holds, b elsewhere; all three broadcast.
Value lower_where(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional) {
  Value cond = lowerer.lower_expr(*positional[0]);
  Value a, b;  // an integer literal branch takes the other branch's kind
  if (is_integer_literal(*positional[1]) && !is_integer_literal(*positional[2])) {
    b = lowerer.lower_expr(*positional[2]);
    a = lowerer.lower_expr(*positional[1], b.type.kind);
  } else {
    a = lowerer.lower_expr(*positional[1]);
    b = lowerer.lower_expr(*positional[2], a.type.kind);
  }
  if (!require_kind(lowerer, positional[0]->loc, "the condition of `where`", cond, ir::ElemKind::Bool) || !a.ok || !b.ok)
    return Value{};
  if (a.type.kind != b.type.kind) {
    a = lowerer.to_real(a, call.loc);
    b = lowerer.to_real(b, call.loc);
  }
  auto type = broadcast_types(lowerer, {cond.type, a.type, b.type}, call.loc);
  if (!type || !a.ok || !b.ok) return Value{};
  type->kind = a.type.kind;
  return lowerer.emit(ir::Op::where, *type, {cond, a, b}, {}, call.loc);
}

}  // namespace presk::lang
