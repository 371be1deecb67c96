// Arithmetic on integer tensors (Z) with ONNX's meaning on the operands' type (docs/import.md,
// "Integers are exact, or refused"):
//   INT64 Add, Sub, Mul, Neg, Abs:  Z arithmetic, exact; where ONNX would wrap (beyond 64 bits)
//                                   the run stops with a coded error (E0550, E0670);
//   narrower types:                 the exact result brought into the type's range modulo 2^b,
//                                   ONNX's wrap-around (Add, Sub: one conditional ∓2^b; Mul, Neg,
//                                   Abs: wrapped_into, one let per bit);
//   Div (INT8 … INT32, UINT8 … UINT32): truncation toward zero, as C's (and ONNX Runtime's)
//                                   division, by restoring long division in Z: one bit of the
//                                   quotient per step, two lets each;
//   Sign:                           max(min(x, 1), -1).
#include <map>
#include <string>

#include "import/builder.h"
#include "import/onnx_reader.h"

namespace presk::onnx_import {
namespace {

// The integer type the graph states for operand `index` (its constant's type), or 0.
int integer_type(Builder& builder, int index) {
  const Value& raw = builder.raw_input(index);
  if (raw.constant && raw.expr.empty()) return raw.constant->is_float() || raw.constant->is_bool() ? 0 : raw.constant->data_type;
  auto it = builder.element_types.find(builder.node->input(index));
  return it == builder.element_types.end() ? 0 : it->second;
}

// The type of the node's integer operands (E1304 when the graph states none, or two).
int operands_type(Builder& builder, int count) {
  int type = 0;
  for (int i = 0; i < count; ++i) {
    const int stated = integer_type(builder, i);
    if (stated == 0) continue;
    if (type != 0 && stated != type) type = -1;
    if (type == 0) type = stated;
  }
  if (type <= 0 || !integer_range(type)) {
    builder.fail("E1304").hint("give the operands' type in the graph (value_info), or compute in INT64")
        << "the integer type of the operands is not stated by the graph, differs between them, or is not one of "
        << "INT8 … INT64, UINT8 … UINT32";
  }
  return type;
}

// The node's output: an expression over `operands` (define_elementwise), or a let already made.
void define_integer(Builder& builder, const std::string& expr, const std::vector<const Value*>& operands, int type) {
  define_elementwise(builder, expr, operands, Kind::Z);
  builder.element_types[builder.node->output(0)] = type;
}

void define_integer_let(Builder& builder, const Value& let, const std::vector<const Value*>& operands, int type) {
  Shape onnx_result;
  for (const Value* value : operands) onnx_result = broadcast_shapes(builder, onnx_result, onnx_shape(*value));
  builder.define(0, reshaped(builder, let, onnx_result, "_shape"));
  builder.element_types[builder.node->output(0)] = type;
}

// |x| as an expression: a Z literal's magnitude written out (abs of a lone literal would be R).
std::string magnitude(const Value& x, int64_t times = 1) {
  if (x.constant && x.shape.empty() && x.expr.find_first_not_of("-0123456789") == std::string::npos) {
    int64_t v = std::stoll(x.expr);
    return std::to_string((v < 0 ? -v : v) * times);
  }
  return times == 1 ? "abs(" + x.expr + ")" : x.expr + " * " + std::to_string(times);
}

// |a| div |b| by restoring division: for k = top … 0, where r ≥ |b|·2^k, r −= |b|·2^k and
// q += 2^k. |b|·2^k < 2^63 for types of at most 32 bits. A zero divisor (undefined in ONNX)
// sets every bit.
Value magnitude_quotient(Builder& builder, const Value& a, const Value& b, int top) {
  const Shape shape = broadcast_shapes(builder, a.shape, b.shape);
  const bool literal = magnitude(b).rfind("abs(", 0) != 0;
  Value divisor = literal ? b : builder.emit(magnitude(b), b.shape, Kind::Z, "_divisor");
  Value r = builder.emit(magnitude(a) + (literal ? "" : " + " + divisor.expr + " * 0"), shape, Kind::Z, "_remainder");
  Value q;
  for (int k = top; k >= 0; --k) {
    const std::string power = std::to_string(int64_t{1} << k);
    const std::string step = literal ? magnitude(b, int64_t{1} << k) : divisor.expr + " * " + power;
    const std::string fits = r.expr + " >= " + step;
    const std::string bit = std::to_string(k);
    const std::string before = q.expr.empty() ? r.expr + " - " + r.expr : q.expr;
    q = builder.emit("where(" + fits + ", " + before + " + " + power + ", " + before + ")", shape, Kind::Z, "_quotient" + bit);
    if (k > 0) r = builder.emit("where(" + fits + ", " + r.expr + " - " + step + ", " + r.expr + ")", shape, Kind::Z, "_remainder" + bit);
  }
  return q;
}

void integer_divide(Builder& builder, const Value& a, const Value& b, int type) {
  const auto [low, high] = *integer_range(type);
  if (type == onnx::TensorProto::INT64) {
    builder.fail("E1304").hint("compute in INT32 or narrower, or in a float type")
        << "integer division of INT64 tensors at run time is not supported (presk imports it on INT8 … INT32 and "
        << "UINT8 … UINT32, and on constants at import)";
  }
  const int bits = integer_bits(type);  // −2^bits ≤ a < 2^bits
  Value q = magnitude_quotient(builder, a, b, low < 0 ? bits : bits - 1);
  if (low == 0) return define_integer_let(builder, q, {&a, &b}, type);
  const std::string as = operand(a), bs = operand(b);
  Value signed_q = builder.emit("where(" + as + " < 0, where(" + bs + " < 0, " + q.expr + ", -" + q.expr + "), where(" + bs +
                                    " < 0, -" + q.expr + ", " + q.expr + "))",
                                q.shape, Kind::Z, "_signed");
  define_integer_let(builder, wrapped_into(builder, signed_q, bits + 1, type, "_wrapped"), {&a, &b}, type);
}

}  // namespace

void integer_binary(Builder& builder, char symbol) {
  const int type = operands_type(builder, 2);
  Value a = number_input(builder, 0, Kind::Z);
  Value b = number_input(builder, 1, Kind::Z);
  if (symbol == '/') return integer_divide(builder, a, b, type);
  std::string expr = operand(a) + " " + symbol + " " + operand(b);
  if (type != onnx::TensorProto::INT64) {
    const auto [low, high] = *integer_range(type);
    const int bits = integer_bits(type);
    if (symbol == '*' && 2 * bits + 1 > 63) {
      builder.fail("E1304").hint("compute in INT64, or in a float type")
          << "integer multiplication on " << data_type_name(type) << " wraps around in ONNX; its exact product can "
          << "leave 64 bits, which presk's integers do not wrap (presk imports Mul on INT8 … INT32, UINT8, UINT16)";
    }
    Value exact = builder.emit(expr, broadcast_shapes(builder, a.shape, b.shape), Kind::Z, "_exact");
    if (symbol == '*') return define_integer_let(builder, wrapped_into(builder, exact, 2 * bits + 1, type, "_wrapped"), {&a, &b}, type);
    const std::string span = std::to_string(high - low + 1);
    const std::string e = exact.expr;
    expr = "where(" + e + " > " + std::to_string(high) + ", " + e + " - " + span + ", where(" + e + " < " + std::to_string(low) +
           ", " + e + " + " + span + ", " + e + "))";
  }
  define_integer(builder, expr, {&a, &b}, type);
}

void integer_unary(Builder& builder, const std::string& function) {
  builder.accept_attributes({});
  const int type = operands_type(builder, 1);
  Value x = number_input(builder, 0, Kind::Z);
  if (function == "sign") return define_integer(builder, "max(min(" + x.expr + ", 1), -1)", {&x}, type);
  const auto low = integer_range(type)->first;
  if (function == "abs" && low == 0) return define_integer(builder, x.expr, {&x}, type);
  std::string expr = function == "abs" ? "abs(" + x.expr + ")" : "-" + operand(x);
  if (type == onnx::TensorProto::INT64) return define_integer(builder, expr, {&x}, type);
  Value exact = builder.emit(expr, x.shape, Kind::Z, "_exact");  // |−x| ≤ 2^bits: one bit more
  define_integer_let(builder, wrapped_into(builder, exact, integer_bits(type) + 1, type, "_wrapped"), {&x}, type);
}

}  // namespace presk::onnx_import
