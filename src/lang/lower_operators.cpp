// Operators: + − × ÷ and comparisons (elementwise, numpy broadcasting, Z/B converted to R
// where they meet R), `@` (a contraction), and indexing `x[a : b, i]` (slices).
#include "lang/lower.h"

namespace presk::lang {
namespace {

ir::Op binary_op(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return ir::Op::add;
    case BinaryOp::Sub: return ir::Op::sub;
    case BinaryOp::Mul: return ir::Op::mul;
    case BinaryOp::Div: return ir::Op::div;
    case BinaryOp::Lt: return ir::Op::lt;
    case BinaryOp::Le: return ir::Op::le;
    case BinaryOp::Gt: return ir::Op::gt;
    case BinaryOp::Ge: return ir::Op::ge;
    case BinaryOp::Eq: return ir::Op::eq;
    case BinaryOp::Ne: return ir::Op::ne;
    case BinaryOp::MatMul: break;
  }
  return ir::Op::contract;
}

bool is_comparison(ir::Op op) {
  return op == ir::Op::lt || op == ir::Op::le || op == ir::Op::gt || op == ir::Op::ge || op == ir::Op::eq ||
         op == ir::Op::ne;
}

// Ops that stay integer on integers (the rest compute in R).
bool keeps_integers(ir::Op op) {
  return op == ir::Op::add || op == ir::Op::sub || op == ir::Op::mul || op == ir::Op::max || op == ir::Op::min ||
         op == ir::Op::neg || op == ir::Op::abs || op == ir::Op::relu || is_comparison(op);
}

}  // namespace

// An integer literal, or one negated (`-3`): it takes the element kind of what it meets.
bool is_integer_literal(const Expr& expr) {
  if (expr.kind == ExprKind::Unary) return is_integer_literal(*expr.as<UnaryExpr>().operand);
  return expr.kind == ExprKind::Number && expr.as<NumberExpr>().integer;
}

Value FunctionLowerer::elementwise(ir::Op op, std::vector<Value> operands, Loc loc) {
  for (const Value& operand : operands) {
    if (!operand.ok) return Value{};
  }
  ir::ElemKind kind = operands[0].type.kind;
  bool same = true;
  for (const Value& operand : operands) same = same && operand.type.kind == kind;
  bool keep = same && (kind == ir::ElemKind::Real || (kind == ir::ElemKind::Int && keeps_integers(op)) ||
                       (kind == ir::ElemKind::Bool && (op == ir::Op::eq || op == ir::Op::ne)));
  if (!keep) {
    for (Value& operand : operands) operand = to_real(operand, loc);
    kind = ir::ElemKind::Real;
  }
  std::vector<ir::Type> types;
  for (const Value& operand : operands) types.push_back(operand.type);
  auto type = broadcast_types(*this, types, loc);
  if (!type) return Value{};
  type->kind = is_comparison(op) ? ir::ElemKind::Bool : kind;
  return emit(op, *type, operands, {}, loc);
}

Value FunctionLowerer::lower_binary(const BinaryExpr& binary) {
  Value lhs, rhs;
  if (is_integer_literal(*binary.lhs) && !is_integer_literal(*binary.rhs)) {
    rhs = lower_expr(*binary.rhs);
    lhs = lower_expr(*binary.lhs, rhs.type.kind);
  } else {
    lhs = lower_expr(*binary.lhs);
    rhs = lower_expr(*binary.rhs, lhs.type.kind);
  }
  if (binary.op != BinaryOp::MatMul) return elementwise(binary_op(binary.op), {lhs, rhs}, binary.loc);
  lhs = to_real(lhs, binary.loc);
  rhs = to_real(rhs, binary.loc);
  if (!lhs.ok || !rhs.ok) return Value{};
  auto spec = matmul_spec(*this, lhs.type, rhs.type, binary.loc);
  if (!spec) return Value{};
  auto type = contract_type(*this, *spec, lhs.type, rhs.type, binary.loc);
  if (!type) return Value{};
  ir::Attrs attrs;
  attrs.spec = *spec;
  return emit(ir::Op::contract, *type, {lhs, rhs}, std::move(attrs), binary.loc);
}

// x[a : b, :, i]: ranges become one `slice`; single positions then drop their axes with a
// `reshape`. Bounds are compile-time integers, 0 ≤ a < b ≤ extent.
Value FunctionLowerer::lower_index(const IndexExpr& index) {
  Value object = lower_expr(*index.object);
  if (!object.ok) return Value{};
  const ir::Type& type = object.type;
  if (index.items.size() > type.shape.size()) {
    report("E0320", index.loc, std::to_string(index.items.size()) + " indices into " + ir::type_to_string(type),
           "index at most one item per axis");
    return Value{};
  }
  ir::Attrs attrs;
  ir::Type sliced = type;
  sliced.axes.resize(sliced.shape.size());
  ir::Type dropped;
  dropped.kind = type.kind;
  bool valid = true;
  for (size_t axis = 0; axis < type.shape.size(); ++axis) {
    int64_t extent = type.shape[axis];
    int64_t start = 0, stop = extent;
    bool single = false;
    if (axis < index.items.size()) {
      const SliceItem& item = index.items[axis];
      single = !item.range;
      auto a = item.start ? scope_.eval_integer(*item.start) : std::optional<int64_t>(0);
      auto b = item.range ? (item.stop ? scope_.eval_integer(*item.stop) : std::optional<int64_t>(extent))
                          : (a && *a < INT64_MAX ? std::optional<int64_t>(*a + 1) : std::nullopt);
      if (!a || !b) {
        valid = false;
        continue;
      }
      start = *a;
      stop = *b;
      if (start < 0 || start >= stop || stop > extent) {
        report("E0320", item.loc, "index " + (single ? std::to_string(start) : std::to_string(start) + " : " + std::to_string(stop)) +
                                      " is outside axis " + std::to_string(axis) + " of extent " + std::to_string(extent),
               "a range a : b needs 0 ≤ a < b ≤ extent");
        valid = false;
        continue;
      }
    }
    if (start != 0 || stop != extent) {
      attrs.axes.push_back(static_cast<int64_t>(axis));
      attrs.starts.push_back(start);
      attrs.stops.push_back(stop);
      sliced.shape[axis] = stop - start;
      sliced.axes[axis] = "";
    }
    if (!single) {
      dropped.shape.push_back(sliced.shape[axis]);
      dropped.axes.push_back(sliced.axes[axis]);
    }
  }
  if (!valid) return Value{};
  Value result = object;
  if (!attrs.axes.empty()) result = emit(ir::Op::slice, sliced, {object}, std::move(attrs), index.loc);
  if (dropped.shape.size() != sliced.shape.size()) result = emit(ir::Op::reshape, dropped, {result}, {}, index.loc);
  return result;
}

}  // namespace presk::lang
