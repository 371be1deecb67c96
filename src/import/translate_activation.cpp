// Translators of the activations and the other elementwise operators users' models bring:
// Clip, the variadic Min/Max/Sum/Mean, Abs, Sign, HardSigmoid, HardSwish, LeakyRelu, PRelu,
// Elu, Selu, Celu, Softplus, Softsign, ThresholdedRelu, Mish, Dropout (inference), the
// comparisons and the boolean operators. Each is an exact composition of presk primitives
// (docs/import.md): over the reals it means what the operator means.
#include <string>

#include "import/builder.h"
#include "ir/ir.h"

namespace presk::onnx_import {
namespace {

std::string real(float value) { return "(" + ir::real_to_string(value) + ")"; }

// An elementwise activation of one operand; `pattern` writes `X` for the operand.
void activation(Builder& builder, const std::string& pattern, std::initializer_list<std::string_view> attributes = {}) {
  builder.accept_attributes(attributes);
  const Value& x = real_input(builder, 0);
  std::string expr;
  for (char c : pattern) expr += c == 'X' ? operand(x) : std::string(1, c);
  define_elementwise(builder, expr, {&x});
}

// Clip: bounds from attributes before opset 11, optional operands from 11 on.
void translate_clip(Builder& builder) {
  const Kind kind = builder.opset >= 11 && builder.input(0).kind == Kind::Z ? Kind::Z : Kind::R;
  const Value x = number_input(builder, 0, kind);  // integers: max and min are exact
  std::string expr = operand(x);
  std::vector<const Value*> operands = {&x};
  if (builder.opset < 11) {
    builder.accept_attributes({"min", "max"});
    if (builder.attribute("min") != nullptr) expr = "max(" + expr + ", " + real(builder.float_attribute("min", 0)) + ")";
    if (builder.attribute("max") != nullptr) expr = "min(" + expr + ", " + real(builder.float_attribute("max", 0)) + ")";
    return define_elementwise(builder, expr, operands);
  }
  builder.accept_attributes({});
  Value low, high;
  if (builder.has_input(1)) {
    low = number_input(builder, 1, kind);
    expr = "max(" + expr + ", " + operand(low) + ")";
    operands.push_back(&low);
  }
  if (builder.has_input(2)) {
    high = number_input(builder, 2, kind);
    expr = "min(" + expr + ", " + operand(high) + ")";
    operands.push_back(&high);
  }
  define_elementwise(builder, expr, operands, kind);
}

// Min, Max, Sum, Mean of one or more operands, broadcast.
void translate_variadic(Builder& builder, const std::string& function) {
  builder.accept_attributes({});
  if (builder.input_count() == 0) builder.fail("E1309") << "the operator needs at least one operand";
  // Min and Max of integers are exact: Z; Sum and Mean compute over the reals.
  const Kind kind = function != "sum" && function != "mean" && builder.input(0).kind == Kind::Z ? Kind::Z : Kind::R;
  std::vector<Value> values;
  for (size_t i = 0; i < builder.input_count(); ++i) {
    values.push_back(kind == Kind::Z ? number_input(builder, static_cast<int>(i), kind)
                                     : real_input(builder, static_cast<int>(i)));
  }
  std::vector<const Value*> operands;
  for (const Value& value : values) operands.push_back(&value);
  std::string expr = operand(*operands[0]);
  for (size_t i = 1; i < operands.size(); ++i) {
    expr = function == "sum" || function == "mean" ? expr + " + " + operand(*operands[i])
                                                   : function + "(" + expr + ", " + operand(*operands[i]) + ")";
  }
  if (function == "mean" && operands.size() > 1) expr = "(" + expr + ") / " + std::to_string(operands.size());
  define_elementwise(builder, expr, operands, kind);
}

// PRelu: x where x ≥ 0, slope · x elsewhere, the slope broadcast to x.
void translate_prelu(Builder& builder) {
  builder.accept_attributes({});
  const Value& x = real_input(builder, 0);
  const Value& slope = real_input(builder, 1);
  define_elementwise(builder, "where(" + operand(x) + " < 0, " + operand(x) + " * " + operand(slope) + ", " + x.expr + ")",
                     {&x, &slope});
}

void translate_leaky_relu(Builder& builder) {
  std::string alpha = real(builder.float_attribute("alpha", 0.01f));
  activation(builder, "where(X < 0, X * " + alpha + ", X)", {"alpha"});
}

void translate_hard_sigmoid(Builder& builder) {
  std::string alpha = real(builder.float_attribute("alpha", 0.2f)), beta = real(builder.float_attribute("beta", 0.5f));
  activation(builder, "max(min(X * " + alpha + " + " + beta + ", 1.0), 0.0)", {"alpha", "beta"});
}

void translate_elu(Builder& builder) {
  std::string alpha = real(builder.float_attribute("alpha", 1.0f));
  activation(builder, "where(X < 0, (exp(X) - 1) * " + alpha + ", X)", {"alpha"});
}

// γ·x for x > 0, γ·(α·eˣ − α) for x ≤ 0 (ONNX's defaults are the f32 constants).
void translate_selu(Builder& builder) {
  std::string alpha = real(builder.float_attribute("alpha", 1.67326319217681884765625f));
  std::string gamma = real(builder.float_attribute("gamma", 1.05070102214813232421875f));
  activation(builder, "where(X > 0, X, exp(X) * " + alpha + " - " + alpha + ") * " + gamma, {"alpha", "gamma"});
}

// max(0, x) + min(0, α·(e^(x/α) − 1)).
void translate_celu(Builder& builder) {
  std::string alpha = real(builder.float_attribute("alpha", 1.0f));
  activation(builder, "relu(X) + min((exp(X / " + alpha + ") - 1) * " + alpha + ", 0.0)", {"alpha"});
}

void translate_thresholded_relu(Builder& builder) {
  std::string alpha = real(builder.float_attribute("alpha", 1.0f));
  activation(builder, "where(X > " + alpha + ", X, 0.0)", {"alpha"});
}

// ln(1 + eˣ), written max(x, 0) + ln(1 + e^(−|x|)): the same real, without overflow.
const char* const kSoftplus = "(relu(X) + log(1 + exp(-abs(X))))";

// Inference: the identity. The mask output and a training run are refused.
void translate_dropout(Builder& builder) {
  builder.accept_attributes({"ratio", "seed", "is_test"});
  if (builder.has_input(2)) {  // training: the identity only at ratio 0
    const Constant& training = builder.constant_input(2, "training_mode");
    if (training.element_count() != 1 || training.values()[0] != 0) {
      const bool ratio_zero = builder.has_input(1) && builder.constant_input(1, "the ratio").values() == std::vector<double>{0.0};
      if (!ratio_zero) builder.fail("E1324") << "training_mode is true; presk imports Dropout in inference (the identity), or in training at ratio 0";
    }
  }
  const Value& x = builder.input(0);
  builder.define(0, x);
  if (builder.node->output_size() > 1 && !builder.node->output(1).empty()) {  // the mask: every element kept
    if (x.kind != Kind::R) builder.fail("E1304") << "operand 0 must be a float tensor";
    builder.define(1, builder.emit("where(" + operand(x) + " == " + operand(x) + ", 1.0, 1.0) > 0.5", x.shape, Kind::B, "_mask"));
  }
}

// Comparisons of real (or integer) operands, giving a boolean.
void translate_compare(Builder& builder, const std::string& symbol) {
  builder.accept_attributes({});
  const Value& a = builder.input(0);
  const Value& b = builder.input(1);
  if (a.kind == Kind::B || b.kind == Kind::B || (a.kind != b.kind)) {
    builder.fail("E1325").hint("compare two float tensors, or two integer tensors")
        << "the operands' element types differ or are boolean";
  }
  define_elementwise(builder, operand(a) + " " + symbol + " " + operand(b), {&a, &b}, Kind::B);
}

const Value& bool_input(Builder& builder, int index) {
  const Value& value = builder.input(index);
  if (value.kind != Kind::B) builder.fail("E1325") << "operand " << index << " must be a BOOL tensor";
  return value;
}

std::string as_real(const Value& value) { return "where(" + value.expr + ", 1.0, 0.0)"; }

// Not, And, Or, Xor: the booleans as 0/1, compared (exact; no arithmetic rounds on 0 and 1).
void translate_not(Builder& builder) {
  builder.accept_attributes({});
  const Value& a = bool_input(builder, 0);
  define_elementwise(builder, as_real(a) + " < 0.5", {&a}, Kind::B);
}

void translate_logic(Builder& builder, const std::string& op) {
  builder.accept_attributes({});
  const Value& a = bool_input(builder, 0);
  const Value& b = bool_input(builder, 1);
  std::string expr = op == "and" ? "min(" + as_real(a) + ", " + as_real(b) + ") > 0.5"
                     : op == "or" ? "max(" + as_real(a) + ", " + as_real(b) + ") > 0.5"
                                  : as_real(a) + " != " + as_real(b);
  define_elementwise(builder, expr, {&a, &b}, Kind::B);
}

}  // namespace

void add_activation_translators(std::map<std::string, Translator>& table) {
  table["Clip"] = translate_clip;
  table["Min"] = [](Builder& b) { translate_variadic(b, "min"); };
  table["Max"] = [](Builder& b) { translate_variadic(b, "max"); };
  table["Sum"] = [](Builder& b) { translate_variadic(b, "sum"); };
  table["Mean"] = [](Builder& b) { translate_variadic(b, "mean"); };
  table["Abs"] = [](Builder& b) {
    if (b.input(0).kind == Kind::Z) return integer_unary(b, "abs");
    activation(b, "abs(X)");
  };
  table["Sign"] = [](Builder& b) {
    if (b.input(0).kind == Kind::Z) return integer_unary(b, "sign");
    activation(b, "where(X > 0, 1.0, where(X < 0, -1.0, 0.0))");
  };
  table["HardSigmoid"] = translate_hard_sigmoid;
  table["HardSwish"] = [](Builder& b) { activation(b, "X * max(min(X / 6 + 0.5, 1.0), 0.0)"); };
  table["LeakyRelu"] = translate_leaky_relu;
  table["PRelu"] = translate_prelu;
  table["Elu"] = translate_elu;
  table["Selu"] = translate_selu;
  table["Celu"] = translate_celu;
  table["Softplus"] = [](Builder& b) { activation(b, kSoftplus); };
  table["Softsign"] = [](Builder& b) { activation(b, "X / (1 + abs(X))"); };
  table["ThresholdedRelu"] = translate_thresholded_relu;
  table["Mish"] = [](Builder& b) { activation(b, std::string("X * tanh") + kSoftplus); };
  table["Dropout"] = translate_dropout;
  table["Equal"] = [](Builder& b) { translate_compare(b, "=="); };
  table["Less"] = [](Builder& b) { translate_compare(b, "<"); };
  table["Greater"] = [](Builder& b) { translate_compare(b, ">"); };
  table["LessOrEqual"] = [](Builder& b) { translate_compare(b, "<="); };
  table["GreaterOrEqual"] = [](Builder& b) { translate_compare(b, ">="); };
  table["Not"] = translate_not;
  table["And"] = [](Builder& b) { translate_logic(b, "and"); };
  table["Or"] = [](Builder& b) { translate_logic(b, "or"); };
  table["Xor"] = [](Builder& b) { translate_logic(b, "xor"); };
}

}  // namespace presk::onnx_import
