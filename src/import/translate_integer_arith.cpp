// Arithmetic on integer tensors (Z) with ONNX's meaning on the operands' type (docs/import.md,
// "Integers are exact, or refused"):
//   INT64 Add, Sub, Mul, Neg, Abs:  Z arithmetic, exact; where ONNX would wrap (beyond 64 bits)
//                                   the run stops with a coded error (E0550, E0670);
//   narrower types:                 the exact result brought into the type's range modulo 2^b,
//                                   ONNX's wrap-around (Add, Sub: one conditional ∓2^b; Mul, Neg,
//                                   Abs: wrapped_into, one let per bit; UINT32 Mul in two halves);
//   Div:                            truncation toward zero, as C's (and ONNX Runtime's)
//                                   division, by restoring long division in Z: one bit of the
//                                   quotient per step, two lets each (INT64 on negated
//                                   magnitudes, which hold −2^63); a zero divisor stops the run
//                                   (a guard that overflows: E0550/E0670), a constant one is E1359;
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

bool is_literal(const Value& x) {
  return x.constant && x.shape.empty() && x.expr.find_first_not_of("-0123456789") == std::string::npos;
}

// |x| as an expression: a Z literal's magnitude written out (abs of a lone literal would be R).
std::string magnitude(const Value& x, int64_t times = 1) {
  if (is_literal(x)) {
    int64_t v = std::stoll(x.expr);
    return std::to_string((v < 0 ? -v : v) * times);
  }
  return times == 1 ? "abs(" + x.expr + ")" : x.expr + " * " + std::to_string(times);
}

// A zero divisor, undefined in ONNX (ONNX Runtime's kernel traps): a constant 0 is E1359; at run
// time the let `…_divisor_is_zero`, 0 where b ≠ 0, overflows 64 bits where b = 0, which stops
// the run with E0550 (the reference) or E0670 (native) at that let, never a quotient; the
// executors word it "a divisor was zero" by the let's name (ir/integer_overflow.h). Returns
// " + guard" to add to the divisor ("" for a nonzero literal).
std::string zero_guard(Builder& builder, const Value& b) {
  if (is_literal(b)) {
    if (std::stoll(b.expr) == 0) {
      builder.fail("E1359").hint("divide by a nonzero constant, or guard the divisor with Where")
          << "integer division by the constant 0, which ONNX leaves undefined";
    }
    return "";
  }
  const std::string zero = operand(b) + " * 0";
  const std::string is_zero = operand(b) + " == 0";
  Value guard = builder.emit("where(" + is_zero + ", " + zero + " + 9223372036854775807, " + zero + ") + where(" + is_zero +
                                 ", " + zero + " + 1, " + zero + ")",
                             b.shape, Kind::Z, "_divisor_is_zero");
  return " + " + guard.expr;
}

// |a| div |b| by restoring division: for k = top … 0, where r ≥ |b|·2^k, r −= |b|·2^k and
// q += 2^k. |b|·2^k < 2^63 for types of at most 32 bits.
Value magnitude_quotient(Builder& builder, const Value& a, const Value& b, int top) {
  const Shape shape = broadcast_shapes(builder, a.shape, b.shape);
  const bool literal = is_literal(b);
  const std::string guard = zero_guard(builder, b);
  Value divisor = literal ? b : builder.emit(magnitude(b) + guard, b.shape, Kind::Z, "_divisor");
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

// INT64 a / b truncated toward zero, exactly: |a| can be 2^63, so the division runs on negated
// magnitudes −|x| = min(x, 0) − max(x, 0) ∈ [−2^63, 0] (never overflowing). For k = 63 … 0 the
// step is S = max(nb, −2^(63−k)) · 2^k ≥ −2^63, which is nb · 2^k where |b| ≤ 2^(63−k) (and
// where |b| is larger, 2^k·|b| > 2^63 ≥ |r|: no bit); where r ≤ S, r −= S (as r − max(S, r),
// which cannot overflow) and nq −= 2^k (likewise guarded). Bit 63 fits only for |b| = 1 and r = −2^63. The sign
// then: −2^63 / −1 wraps around to −2^63 (two's complement, as ONNX's narrower types do).
Value int64_quotient(Builder& builder, Value a, Value b) {
  if (is_literal(a)) a = builder.emit(operand(b) + " * 0 + " + operand(a), b.shape, Kind::Z, "_dividend");
  const std::string guard = zero_guard(builder, b);
  if (is_literal(b)) b = builder.emit(operand(a) + " * 0 + " + operand(b), a.shape, Kind::Z, "_divisor_value");
  const Shape shape = broadcast_shapes(builder, a.shape, b.shape);
  Value nb = builder.emit("min(" + b.expr + ", 0) - max(" + b.expr + ", 0)" + guard, b.shape, Kind::Z, "_negated_divisor");
  Value r = builder.emit("min(" + a.expr + ", 0) - max(" + a.expr + ", 0) + " + nb.expr + " * 0", shape, Kind::Z, "_remainder");
  const std::string low = "-9223372036854775807";  // −2^63 + 1: r < low only at −2^63
  Value nq = builder.emit("where(" + nb.expr + " >= -1, where(" + r.expr + " < " + low + ", " + r.expr + ", " + r.expr +
                              " - " + r.expr + "), " + r.expr + " - " + r.expr + ")",
                          shape, Kind::Z, "_quotient63");
  r = builder.emit("where(" + nb.expr + " >= -1, where(" + r.expr + " < " + low + ", " + r.expr + " - " + r.expr + ", " + r.expr +
                       "), " + r.expr + ")",
                   shape, Kind::Z, "_remainder63");
  for (int k = 62; k >= 0; --k) {
    const std::string power = std::to_string(int64_t{1} << k);
    const std::string bound = k == 0 ? "" : "-" + std::to_string(int64_t{1} << (63 - k));
    const std::string step = k == 0 ? nb.expr : "max(" + nb.expr + ", " + bound + ") * " + power;
    const std::string in_range = k == 0 ? "" : nb.expr + " >= " + bound;
    auto when_fits = [&](const std::string& then, const std::string& otherwise) {
      const std::string inner = "where(" + r.expr + " <= " + step + ", " + then + ", " + otherwise + ")";
      return in_range.empty() ? inner : "where(" + in_range + ", " + inner + ", " + otherwise + ")";
    };
    const std::string bit = std::to_string(k);
    // nq − 2^k as max(nq, −2^63 + 2^k) − 2^k: the same where the bit fits, and never an overflow
    // in the branch not taken (nq is −2^63 after bit 63)
    const std::string floor = std::to_string(INT64_MIN + (int64_t{1} << k));
    nq = builder.emit(when_fits("max(" + nq.expr + ", " + floor + ") - " + power, nq.expr), shape, Kind::Z, "_quotient" + bit);
    if (k > 0) r = builder.emit(when_fits(r.expr + " - max(" + step + ", " + r.expr + ")", r.expr), shape, Kind::Z, "_remainder" + bit);
  }
  const std::string same = "where(" + nq.expr + " < " + low + ", " + nq.expr + ", -max(" + nq.expr + ", " + low + "))";
  return builder.emit("where(" + operand(a) + " < 0, where(" + operand(b) + " < 0, " + same + ", " + nq.expr + "), where(" +
                          operand(b) + " < 0, " + nq.expr + ", " + same + "))",
                      shape, Kind::Z, "_signed");
}

// x mod 2^16 of a UINT32 value: a literal's at import, else wrapped_into (16 lets).
Value low_half(Builder& builder, const Value& x, const std::string& suffix) {
  if (is_literal(x)) return Value{std::to_string(std::stoll(x.expr) & 0xffff), {}, Kind::Z, x.constant};
  return wrapped_into(builder, x, 32, onnx::TensorProto::UINT16, suffix);
}

// UINT32 a · b modulo 2^32, whose exact product can leave 64 bits: with a = al + ah (al = a mod
// 2^16, ah a multiple of 2^16), a·b ≡ al·b + ah·(b mod 2^16) (mod 2^32), each term < 2^48, then
// brought into [0, 2^32) by wrapped_into.
Value uint32_product(Builder& builder, const Value& a, const Value& b) {
  Value a_low = low_half(builder, a, "_a_low"), b_low = low_half(builder, b, "_b_low");
  const std::string a_high = is_literal(a) ? std::to_string(std::stoll(a.expr) - std::stoll(a_low.expr))
                                           : "(" + a.expr + " - " + a_low.expr + ")";
  Value exact = builder.emit(operand(a_low) + " * " + operand(b) + " + " + a_high + " * " + operand(b_low),
                             broadcast_shapes(builder, a.shape, b.shape), Kind::Z, "_exact");
  return wrapped_into(builder, exact, 49, onnx::TensorProto::UINT32, "_wrapped");
}

void integer_divide(Builder& builder, const Value& a, const Value& b, int type) {
  const auto [low, high] = *integer_range(type);
  if (type == onnx::TensorProto::INT64) return define_integer_let(builder, int64_quotient(builder, a, b), {&a, &b}, type);
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
    if (symbol == '*' && 2 * bits + 1 > 63) return define_integer_let(builder, uint32_product(builder, a, b), {&a, &b}, type);
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
