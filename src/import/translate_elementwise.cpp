// Translators of the elementwise operators: arithmetic, Pow, the unary functions, Where.
// Each is the presk primitive of the same meaning over the reals (docs/import.md).
#include <cmath>
#include <cstdint>
#include <map>

#include "import/builder.h"
#include "import/onnx_reader.h"
#include "ir/ir.h"

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
  if (builder.input(0).kind == Kind::Z) return integer_binary(builder, Symbol);
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
  if (builder.input(0).kind == Kind::Z) return integer_unary(builder, "neg");
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

// x^y for any y (a run-time tensor, or a constant that is not one of the forms below), as its
// exact meaning over the extended reals: |x|^y = exp(y · ln|x|) (0 at x = 0 for y > 0, ∞ for
// y < 0), negated for x < 0 and an odd integer y, NaN for x < 0 and y not an integer (√x is
// NaN there), and 1 for y = 0 whatever x (also NaN, as C's pow and ONNX Runtime).
void general_pow(Builder& builder, const Value& x, Value y) {
  if (y.kind == Kind::Z) y = builder.emit(y.expr + " + 0.0", y.shape, Kind::R, "_exponent");
  if (y.kind != Kind::R) builder.fail("E1304") << "the exponent (operand 1) must be a float or integer tensor";
  const std::string xs = operand(x), ys = operand(y);
  Value magnitude = builder.emit("exp(" + ys + " * log(abs(" + x.expr + ")))",
                                 broadcast_shapes(builder, x.shape, y.shape), Kind::R, "_magnitude");
  const std::string odd = ys + " - 2 * floor(" + ys + " / 2) == 1";
  define_elementwise(builder,
                     "where(" + ys + " == 0, 1.0, where(" + xs + " < 0, where(" + ys + " == floor(" + ys + "), where(" +
                         odd + ", -" + magnitude.expr + ", " + magnitude.expr + "), sqrt(" + x.expr + ")), " +
                         magnitude.expr + "))",
                     {&x, &y, &magnitude});
}

// x^e: a constant e of 0.5 is √x, −0.5 is 1/√x, a whole e in [−4, 4] (not 0) repeated
// products (and a quotient for e < 0); every other exponent the general form above.
void translate_pow(Builder& builder) {
  builder.accept_attributes({});
  const Value& x = real_input(builder, 0);
  std::shared_ptr<const Constant> e_constant = builder.raw_input(1).constant;
  if (e_constant && !e_constant->is_float() && !e_constant->is_symbolic() && !e_constant->is_bool()) {
    auto real = std::make_shared<Constant>(*e_constant);  // an integer exponent, exact as a real
    real->data_type = onnx::TensorProto::DOUBLE;
    Value made = builder.materialize(*real);
    Value shaped{made.expr, made.shape, Kind::R, made.expr.rfind("p.", 0) == 0 ? nullptr : real};
    if (real->element_count() != 1) return general_pow(builder, x, shaped);
    e_constant = real;
  }
  if (!e_constant || e_constant->element_count() != 1 || e_constant->is_symbolic()) {
    return general_pow(builder, x, tensor_input(builder, 1));
  }
  double e = e_constant->values()[0];
  Value exponent_value{"", {}, Kind::R, e_constant};  // its shape only
  std::string expr;
  if (e == 0.5) {
    expr = "sqrt(" + x.expr + ")";
  } else if (e == -0.5) {
    expr = "rsqrt(" + x.expr + ")";
  } else if (e == std::floor(e) && e != 0 && std::fabs(e) <= 4) {
    std::string power = operand(x);
    for (int k = 1; k < std::fabs(e); ++k) power += " * " + operand(x);
    expr = e > 0 ? power : "1 / (" + power + ")";
  } else if (e_constant->is_float()) {
    return general_pow(builder, x, tensor_input(builder, 1));
  } else {
    Value literal{ir::real_to_string(e), {}, Kind::R, e_constant};
    return general_pow(builder, x, literal);
  }
  define_elementwise(builder, expr, {&x, &exponent_value});
}

void translate_where(Builder& builder) {
  builder.accept_attributes({});
  const Value& condition = builder.input(0);
  if (condition.kind != Kind::B) builder.fail("E1304") << "the condition (operand 0) must be BOOL";
  const Kind kind = builder.input(1).kind == Kind::Z ? Kind::Z : Kind::R;  // integer branches select exactly
  Value a = number_input(builder, 1, kind);
  Value b = number_input(builder, 2, kind);
  define_elementwise(builder, "where(" + condition.expr + ", " + operand(a) + ", " + operand(b) + ")", {&condition, &a, &b}, kind);
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
