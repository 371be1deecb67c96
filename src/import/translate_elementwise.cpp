// Translators of the elementwise operators: arithmetic, Pow, the unary functions, Where.
// Each is the presk primitive of the same meaning over the reals (docs/import.md).
#include <cmath>

#include "import/builder.h"

namespace presk::onnx_import {

// Emits `expr` over `operands` and gives it ONNX's broadcast shape: a literal operand is a
// scalar to presk, so a constant of shape [1, 1] can widen ONNX's result where presk's
// stays narrower; a reshape then restores ONNX's shape.
void define_elementwise(Builder& builder, const std::string& expr, const std::vector<const Value*>& operands,
                        Kind kind) {
  Shape presk_shape, onnx_result;
  for (const Value* value : operands) {
    presk_shape = broadcast_shapes(builder, presk_shape, value->shape);
    onnx_result = broadcast_shapes(builder, onnx_result, onnx_shape(*value));
  }
  Value value = builder.emit(expr, presk_shape, kind);
  builder.define(0, reshaped(builder, value, onnx_result, "_shape"));
}

namespace {

template <char Symbol>
void binary(Builder& builder) {
  builder.accept_attributes({});
  const Value& a = real_input(builder, 0);
  const Value& b = real_input(builder, 1);
  define_elementwise(builder, operand(a) + " " + Symbol + " " + operand(b), {&a, &b});
}

void unary(Builder& builder, const std::string& function) {
  builder.accept_attributes({});
  const Value& x = real_input(builder, 0);
  define_elementwise(builder, function + "(" + x.expr + ")", {&x});
}

void translate_neg(Builder& builder) {
  builder.accept_attributes({});
  const Value& x = real_input(builder, 0);
  define_elementwise(builder, "-" + operand(x), {&x});
}

void translate_reciprocal(Builder& builder) {
  builder.accept_attributes({});
  const Value& x = real_input(builder, 0);
  define_elementwise(builder, "1 / " + operand(x), {&x});
}

// σ(x) = 1 / (1 + e^(−x)).
void translate_sigmoid(Builder& builder) {
  builder.accept_attributes({});
  const Value& x = real_input(builder, 0);
  define_elementwise(builder, "1 / (1 + exp(-" + operand(x) + "))", {&x});
}

// Gelu (opset 20, or com.microsoft): approximate "none" is x/2 (1 + erf(x/√2)), "tanh" the
// tanh form; both are presk primitives.
void translate_gelu(Builder& builder) {
  builder.accept_attributes({"approximate"});
  std::string approximate = builder.string_attribute("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    builder.fail("E1303") << "approximate=\"" << printable(approximate) << "\" is not supported (supported: none, tanh)";
  }
  const Value& x = real_input(builder, 0);
  define_elementwise(builder, (approximate == "tanh" ? "gelu_tanh(" : "gelu_erf(") + x.expr + ")", {&x});
}

// x^e for a constant e: 0.5 is √x, −0.5 is 1/√x, a whole e in [−4, 4] (not 0) repeated
// products (and a quotient for e < 0). Other exponents are refused.
void translate_pow(Builder& builder) {
  builder.accept_attributes({});
  const Constant& exponent = builder.constant_input(1, "the exponent");
  if (exponent.values.size() != 1) builder.fail("E1303") << "the exponent must be one number";
  double e = exponent.values[0];
  const Value& x = real_input(builder, 0);
  Value exponent_value{"", {}, Kind::R, builder.raw_input(1).constant};  // its shape only
  std::string expr;
  if (e == 0.5) {
    expr = "sqrt(" + x.expr + ")";
  } else if (e == -0.5) {
    expr = "rsqrt(" + x.expr + ")";
  } else if (e == std::floor(e) && e != 0 && std::fabs(e) <= 4) {
    std::string power = operand(x);
    for (int k = 1; k < std::fabs(e); ++k) power += " * " + operand(x);
    expr = e > 0 ? power : "1 / (" + power + ")";
  } else {
    builder.fail("E1303") << "the exponent " << e << " is not supported (supported: 0.5, -0.5 and the integers -4 … 4 but 0)";
  }
  define_elementwise(builder, expr, {&x, &exponent_value});
}

void translate_where(Builder& builder) {
  builder.accept_attributes({});
  const Value& condition = builder.input(0);
  if (condition.kind != Kind::B) builder.fail("E1304") << "the condition (operand 0) must be BOOL";
  const Value& a = real_input(builder, 1);
  const Value& b = real_input(builder, 2);
  define_elementwise(builder, "where(" + condition.expr + ", " + a.expr + ", " + b.expr + ")", {&condition, &a, &b});
}

}  // namespace

void add_elementwise_translators(std::map<std::string, Translator>& table) {
  table["Add"] = binary<'+'>;
  table["Sub"] = binary<'-'>;
  table["Mul"] = binary<'*'>;
  table["Div"] = binary<'/'>;
  table["Neg"] = translate_neg;
  table["Reciprocal"] = translate_reciprocal;
  table["Sigmoid"] = translate_sigmoid;
  table["Gelu"] = translate_gelu;
  table["Pow"] = translate_pow;
  table["Where"] = translate_where;
  table["Sqrt"] = [](Builder& b) { unary(b, "sqrt"); };
  table["Exp"] = [](Builder& b) { unary(b, "exp"); };
  table["Log"] = [](Builder& b) { unary(b, "log"); };
  table["Tanh"] = [](Builder& b) { unary(b, "tanh"); };
  table["Relu"] = [](Builder& b) { unary(b, "relu"); };
  table["Erf"] = [](Builder& b) { unary(b, "erf"); };
  table["Sin"] = [](Builder& b) { unary(b, "sin"); };
  table["Cos"] = [](Builder& b) { unary(b, "cos"); };
  table["Round"] = [](Builder& b) { unary(b, "round"); };  // ties to even, as ONNX's
  table["Floor"] = [](Builder& b) { unary(b, "floor"); };
  table["Ceil"] = [](Builder& b) { unary(b, "ceil"); };
}

}  // namespace presk::onnx_import
