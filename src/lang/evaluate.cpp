// Compile-time evaluation: shapes as overflow-checked integer arithmetic over consts and
// dims (division must be exact), compile-time reals as exact rationals, tensor types, and the
// size limit.
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "lang/scope.h"

namespace presk::lang {
namespace {

const char* kShapeHint = "a shape is integer arithmetic (+ - * /) over numbers, consts and dims";

}  // namespace

std::optional<int64_t> ProgramScope::eval_name(const NameExpr& name) {
  if (const ConstInfo* c = find_const(name.name)) {
    if (!c->valid) return std::nullopt;
    if (!c->integer) {
      report("E0335", name.loc, "const `" + name.name + "` is " + c->text + ", not an integer",
             "shapes and counts are integers; use an integer const here");
      return std::nullopt;
    }
    return c->value;
  }
  auto dim = dims_.find(name.name);
  if (dim != dims_.end()) {
    if (dim->second.value) return dim->second.value;
    if (!dim->second.reported_unbound) {
      dim->second.reported_unbound = true;
      report("E0304", name.loc, "dim `" + name.name + "` has no value",
             "bind it when compiling: --dim " + name.name + "=<size>");
    }
    return std::nullopt;
  }
  report("E0301", name.loc, "unknown name `" + name.name + "` in a shape",
         "declare it with `const " + name.name + " = …` or `dim " + name.name + "`");
  return std::nullopt;
}

std::optional<int64_t> ProgramScope::eval_integer(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::Number: {
      const auto& number = expr.as<NumberExpr>();
      int64_t value = 0;
      auto [end, error] = std::from_chars(number.text.data(), number.text.data() + number.text.size(), value);
      if (!number.integer || error != std::errc() || end != number.text.data() + number.text.size()) {
        report(number.integer ? "E0309" : "E0307", expr.loc,
               "`" + number.text + "` is not an integer that fits in 64 bits", kShapeHint);
        return std::nullopt;
      }
      return value;
    }
    case ExprKind::Name: return eval_name(expr.as<NameExpr>());
    case ExprKind::Unary: {
      auto value = eval_integer(*expr.as<UnaryExpr>().operand);
      if (!value) return std::nullopt;
      int64_t result = 0;
      if (__builtin_sub_overflow(int64_t{0}, *value, &result)) {
        report("E0309", expr.loc, "integer overflow", "shapes must fit in 64-bit integers");
        return std::nullopt;
      }
      return result;
    }
    case ExprKind::Binary: break;
    default:
      report("E0307", expr.loc, "this is not a shape expression", kShapeHint);
      return std::nullopt;
  }
  const auto& binary = expr.as<BinaryExpr>();
  auto lhs = eval_integer(*binary.lhs);
  auto rhs = eval_integer(*binary.rhs);
  if (!lhs || !rhs) return std::nullopt;
  int64_t result = 0;
  bool overflow = false;
  switch (binary.op) {
    case BinaryOp::Add: overflow = __builtin_add_overflow(*lhs, *rhs, &result); break;
    case BinaryOp::Sub: overflow = __builtin_sub_overflow(*lhs, *rhs, &result); break;
    case BinaryOp::Mul: overflow = __builtin_mul_overflow(*lhs, *rhs, &result); break;
    case BinaryOp::Div:
      if (*rhs == 0 || (*lhs == INT64_MIN && *rhs == -1) || *lhs % *rhs != 0) {
        report("E0307", expr.loc,
               "`/` in a shape must divide exactly: " + std::to_string(*lhs) + " / " +
                   std::to_string(*rhs) + " does not",
               "choose consts so that the division is exact");
        return std::nullopt;
      }
      result = *lhs / *rhs;
      break;
    default:
      report("E0307", expr.loc, std::string("`") + binary_op_text(binary.op) + "` is not allowed in a shape",
             kShapeHint);
      return std::nullopt;
  }
  if (overflow) {
    report("E0309", expr.loc, "integer overflow in a shape", "shapes must fit in 64-bit integers");
    return std::nullopt;
  }
  return result;
}

std::optional<int64_t> ProgramScope::eval_extent(const Expr& expr) {
  auto value = eval_integer(expr);
  if (value && *value <= 0) {
    report("E0308", expr.loc, "an extent must be positive; this one is " + std::to_string(*value),
           "check the consts and dims it is computed from");
    return std::nullopt;
  }
  return value;
}

std::optional<double> ProgramScope::eval_real(const Expr& expr) {
  std::optional<ExactReal> value = eval_exact_real(expr);
  return value ? std::optional(value->to_double()) : std::nullopt;
}

// A compile-time real, exactly: a rational, each step's value within binary64's range (so
// the native executor can hold it) and of bounded size (E0342).
std::optional<ExactReal> ProgramScope::eval_exact_real(const Expr& expr) {
  std::optional<ExactReal> result;
  switch (expr.kind) {
    case ExprKind::Number: {
      const std::string& text = expr.as<NumberExpr>().text;
      result = ExactReal::parse(text);
      if (!result && std::isinf(round_literal(text, kBinary64).value_or(0))) {
        report("E0307", expr.loc, "this number is out of the range of a real", "");
        return std::nullopt;
      }
      if (!result) {
        report("E0342", expr.loc, "`" + text + "` has no exact value of bounded size",
               "write the number with an exponent within ±" + std::to_string(ExactReal::kMaxDecimalExponent));
        return std::nullopt;
      }
      break;
    }
    case ExprKind::Name: {
      const auto& name = expr.as<NameExpr>();
      if (const ConstInfo* c = find_const(name.name)) return c->valid ? std::optional(c->real) : std::nullopt;
      auto value = eval_name(name);
      return value ? std::optional(ExactReal(*value)) : std::nullopt;
    }
    case ExprKind::Unary: {
      auto value = eval_exact_real(*expr.as<UnaryExpr>().operand);
      return value ? std::optional(-*value) : std::nullopt;
    }
    case ExprKind::Binary: result = eval_exact_binary(expr.as<BinaryExpr>()); break;
    default:
      report("E0317", expr.loc, "expected a compile-time number",
             "write a number, a const, or arithmetic (+ - * /) over them");
      return std::nullopt;
  }
  if (!result) return std::nullopt;
  if (!std::isfinite(result->to_double())) {
    report("E0307", expr.loc, "this compile-time number is out of the range of a real",
           "compile-time reals lie within binary64's range (below about 1.8e308 in magnitude)");
    return std::nullopt;
  }
  if (result->size_bits() > kMaxExactRealBits) {
    report("E0342", expr.loc,
           "the exact value of this compile-time number needs more than " + std::to_string(kMaxExactRealBits) +
               " bits",
           "compile-time reals are folded exactly, as rationals; simplify the arithmetic");
    return std::nullopt;
  }
  return result;
}

std::optional<ExactReal> ProgramScope::eval_exact_binary(const BinaryExpr& binary) {
  auto lhs = eval_exact_real(*binary.lhs);
  auto rhs = eval_exact_real(*binary.rhs);
  if (!lhs || !rhs) return std::nullopt;
  switch (binary.op) {
    case BinaryOp::Add: return *lhs + *rhs;
    case BinaryOp::Sub: return *lhs - *rhs;
    case BinaryOp::Mul: return *lhs * *rhs;
    case BinaryOp::Div:
      if (rhs->is_zero()) {
        report("E0307", binary.rhs->loc, "a compile-time division by zero", "");
        return std::nullopt;
      }
      return *lhs / *rhs;
    default:
      report("E0317", binary.lhs->loc, "expected a compile-time number", "use + - * / only");
      return std::nullopt;
  }
}

std::optional<ir::Type> ProgramScope::eval_tensor_type(const TypeExpr& type) {
  internal_assert(type.kind == TypeExpr::Kind::Tensor);
  ir::Type result;
  result.kind = type.name == "R" ? ir::ElemKind::Real : type.name == "Z" ? ir::ElemKind::Int : ir::ElemKind::Bool;
  bool valid = true;
  for (const ExprPtr& axis : type.shape) {
    auto extent = eval_extent(*axis);
    valid = valid && extent.has_value();
    result.shape.push_back(extent.value_or(1));
    result.axes.push_back(axis->kind == ExprKind::Name ? axis->as<NameExpr>().name : "");
  }
  if (!valid || !check_size(result, type.loc)) return std::nullopt;
  return result;
}

bool ProgramScope::check_size(const ir::Type& type, Loc loc) {
  int64_t count = 1;
  bool overflow = false;
  for (int64_t extent : type.shape) overflow = overflow || __builtin_mul_overflow(count, extent, &count);
  if (overflow || count > kMaxElements) {
    report("E0310", loc, "a tensor of type " + ir::type_to_string(type) + " has too many elements",
           "tensors hold at most 2^40 elements; check the dims and consts");
    return false;
  }
  return true;
}

}  // namespace presk::lang
