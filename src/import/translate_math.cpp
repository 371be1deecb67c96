// Translators of the elementwise functions that presk writes as compositions of its primitives:
// Tan, Sinh, Cosh, Asinh, Acosh, Atanh, Atan, Asin, Acos, Shrink, IsNaN, IsInf, and float Mod (fmod=1). Each is
// the function's exact meaning over the (extended) reals (docs/import.md, "Operators").
#include "import/builder.h"
#include "ir/ir.h"

namespace presk::onnx_import {
namespace {

std::string real(float value) { return "(" + ir::real_to_string(value) + ")"; }

// `pattern` with `X` replaced by the float operand 0, of kind `kind`.
void function_of(Builder& builder, const std::string& pattern, Kind kind = Kind::R) {
  const Value& x = real_input(builder, 0);
  std::string expr;
  for (char c : pattern) expr += c == 'X' ? operand(x) : std::string(1, c);
  define_elementwise(builder, expr, {&x}, kind);
}

// Shrink: x + bias below −λ, x − bias above λ, 0 between.
void translate_shrink(Builder& builder) {
  builder.accept_attributes({"bias", "lambd"});
  std::string bias = real(builder.float_attribute("bias", 0.0f)), lambd = real(builder.float_attribute("lambd", 0.5f));
  function_of(builder, "where(X < -" + lambd + ", X + " + bias + ", where(X > " + lambd + ", X - " + bias + ", 0.0))");
}

// IsInf: s − s ≠ 0 exactly for s = ±∞ (∞ − ∞ is NaN) and s = NaN, so s is x where x is a number
// of the detected sign (x == x excludes NaN) and 0 elsewhere.
void translate_is_inf(Builder& builder) {
  builder.accept_attributes({"detect_negative", "detect_positive"});
  bool negative = builder.int_attribute("detect_negative", 1) != 0;
  bool positive = builder.int_attribute("detect_positive", 1) != 0;
  if (!negative && !positive) builder.fail("E1303") << "detect_negative=0 with detect_positive=0 detects nothing";
  const Value& x = real_input(builder, 0);
  std::string condition = negative && positive ? "X == X" : positive ? "X > 0" : "X < 0";
  std::string pattern = "where(" + condition + ", X, 0.0)";
  std::string picked;
  for (char c : pattern) picked += c == 'X' ? operand(x) : std::string(1, c);
  Value s = builder.emit(picked, x.shape, Kind::R, "_picked");
  define_elementwise(builder, s.expr + " - " + s.expr + " != 0", {&s}, Kind::B);
}

// Mod of floats (fmod=1, as ONNX requires for them): a − b · trunc(a / b), trunc toward zero.
void translate_float_mod(Builder& builder) {
  builder.accept_attributes({"fmod"});
  for (int i = 0; i < 2; ++i) {  // integers: evaluated at import (fold_shapes.cpp), or here refused
    const Value& raw = builder.raw_input(i);
    const bool integer = raw.expr.empty() ? !raw.constant->is_float() : raw.kind != Kind::R;
    if (!integer) continue;
    const int runtime = builder.raw_input(0).expr.empty() ? 1 : 0;
    builder.fail("E1314").hint("presk evaluates integer Mod at import only, on constants and shapes")
        << "operand " << runtime << " (`" << printable(builder.node->input(runtime)) << "`) is computed from run-time data";
  }
  if (builder.int_attribute("fmod", 0) == 0) {
    builder.fail("E1303") << "Mod of float tensors needs fmod=1 (ONNX's own rule)";
  }
  const Value& a = real_input(builder, 0);
  const Value& b = real_input(builder, 1);
  Value q = builder.emit(operand(a) + " / " + operand(b), broadcast_shapes(builder, a.shape, b.shape), Kind::R, "_quotient");
  define_elementwise(builder, operand(a) + " - " + operand(b) + " * where(" + q.expr + " < 0, ceil(" + q.expr +
                                  "), floor(" + q.expr + "))",
                     {&a, &b, &q});
}

}  // namespace

void add_math_translators(std::map<std::string, Translator>& table) {
  table["Tan"] = [](Builder& b) { b.accept_attributes({}); function_of(b, "sin(X) / cos(X)"); };
  table["Sinh"] = [](Builder& b) { b.accept_attributes({}); function_of(b, "(exp(X) - exp(-X)) / 2"); };
  table["Cosh"] = [](Builder& b) { b.accept_attributes({}); function_of(b, "(exp(X) + exp(-X)) / 2"); };
  // asinh x = sign(x) · ln(|x| + √(x² + 1)), without the cancellation of x + √(x² + 1) at x < 0.
  table["Asinh"] = [](Builder& b) {
    b.accept_attributes({});
    function_of(b, "where(X < 0, -log(abs(X) + sqrt(X * X + 1)), log(abs(X) + sqrt(X * X + 1)))");
  };
  // acosh x = ln(x + √(x² − 1)): NaN below 1, as ONNX (√ of a negative, or ln of one).
  table["Acosh"] = [](Builder& b) { b.accept_attributes({}); function_of(b, "log(X + sqrt(X * X - 1))"); };
  table["Atanh"] = [](Builder& b) { b.accept_attributes({}); function_of(b, "log((1 + X) / (1 - X)) / 2"); };
  table["Atan"] = [](Builder& b) { b.accept_attributes({}); function_of(b, "atan(X)"); };
  // asin x = atan(x / √((1 − x)(1 + x))): ±π/2 at ±1 (x / 0 = ±∞), NaN beyond (√ of a negative).
  table["Asin"] = [](Builder& b) { b.accept_attributes({}); function_of(b, "atan(X / sqrt((1 - X) * (1 + X)))"); };
  // acos x = 2 atan(√((1 − x) / (1 + x))): π at −1 (√∞), 0 at 1, NaN beyond.
  table["Acos"] = [](Builder& b) { b.accept_attributes({}); function_of(b, "2 * atan(sqrt((1 - X) / (1 + X)))"); };
  table["Shrink"] = translate_shrink;
  table["IsNaN"] = [](Builder& b) { b.accept_attributes({}); function_of(b, "X != X", Kind::B); };
  table["IsInf"] = translate_is_inf;
  table["Mod"] = translate_float_mod;  // integer Mod is evaluated at import (fold_shapes.cpp)
}

}  // namespace presk::onnx_import
