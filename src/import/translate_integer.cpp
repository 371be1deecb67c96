// Translators of ONNX's integer-code operators, with their exact meaning over the reals
// (docs/import.md, "Quantized models"):
//   MatMulInteger, ConvInteger:  (a − a_zero_point) · (b − b_zero_point), summed exactly
//                                (INT32 in ONNX; refused where that sum could wrap);
//   QLinearMatMul, QLinearConv:  clamp(round(((a − a_zp) · a_scale) · ((b − b_zp) · b_scale)
//                                / y_scale) + y_zp, lo, hi), round ties to even;
//   DynamicQuantizeLinear:       scale = (max(x, 0) − min(x, 0)) / 255, zero point =
//                                round(clamp(−min(x, 0) / scale, 0, 255)), codes as QuantizeLinear.
// The codes are reals holding integers, as QuantizeLinear's (translate_quant.cpp). The products
// themselves are MatMul and Conv: each node is translated as one of those on the shifted and
// scaled operands, so the contraction is the one those translators write.
#include <map>
#include <string>

#include "import/builder.h"
#include "import/onnx_reader.h"

namespace presk::onnx_import {
namespace {

constexpr int64_t kMaxExactTerms = 33025;  // 255 · 255 · 33025 < 2^31: an INT32 sum of products that cannot wrap

// Operand `index` as a real value: a constant as a parameter of reals (its integers exactly),
// a run-time integer tensor converted (`+ 0.0`), a float one as it is.
Value real_operand(Builder& builder, int index) {
  const Value& raw = builder.raw_input(index);
  if (raw.constant && raw.expr.empty() && !raw.constant->is_float()) {
    if (raw.constant->is_symbolic() || raw.constant->is_bool()) builder.fail("E1304") << "operand " << index << " must be numeric";
    Constant real = *raw.constant;
    real.data_type = onnx::TensorProto::FLOAT;
    return builder.materialize(real);
  }
  const Value& value = builder.input(index);
  if (value.kind == Kind::B) builder.fail("E1304") << "operand " << index << " must be a numeric tensor";
  if (value.kind == Kind::R) return value;
  return builder.emit(value.expr + " + 0.0", value.shape, Kind::R, "_real" + std::to_string(index));
}

// A zero point or scale laid against `x`: a single element as it is; a vector of the extent of
// x's axis `axis` (a row of MatMul's a, an output channel of a Conv weight) reshaped to
// [E, 1, …] so that it broadcasts along that axis; a vector along the last axis as it is.
Value laid_against(Builder& builder, Value value, const Value& x, size_t axis) {
  if (value.shape.empty() || product(value.shape, 0, value.shape.size()) == Extent{}) return value;
  if (value.shape.size() == 1 && axis + 1 < x.shape.size() && value.shape[0] == x.shape[axis]) {
    Shape laid(x.shape.size() - axis, Extent{});
    laid[0] = x.shape[axis];
    return reshaped(builder, value, laid, "_laid");
  }
  if (value.shape.size() == 1 && !x.shape.empty() && value.shape[0] == x.shape.back()) return value;
  builder.fail("E1336") << "a scale or zero point of shape " << shape_list(value.shape) << " does not fit the operand "
                        << shape_list(x.shape);
  return value;
}

// (x − zero point) · scale of operands `x`, `zero` and `scale` (−1: none), laid along `axis`.
Value dequantized(Builder& builder, int x_index, int zero, int scale, size_t axis, const std::string& suffix) {
  Value x = real_operand(builder, x_index);
  std::string expr = x.expr;
  if (zero >= 0 && !absent_or_zero(builder, zero)) {
    expr = "(" + expr + " - " + operand(laid_against(builder, real_operand(builder, zero), x, axis)) + ")";
  }
  if (scale >= 0) expr += " * " + operand(laid_against(builder, real_operand(builder, scale), x, axis));
  if (expr == x.expr) return x;
  return builder.emit(expr, x.shape, Kind::R, suffix);
}

// The codes' type of a zero point operand: its constant's, or the type the graph states.
int code_type(Builder& builder, int index) {
  if (!builder.has_input(index)) return onnx::TensorProto::UINT8;
  const Value& raw = builder.raw_input(index);
  if (raw.constant) return raw.constant->data_type;
  auto it = builder.element_types.find(builder.node->input(index));
  return it == builder.element_types.end() ? 0 : it->second;
}

// clamp(round(acc / scale) + zero point, lo, hi) into the codes of the zero point's type.
std::string requantized(Builder& builder, const Value& acc, int scale, int zero) {
  const int type = code_type(builder, zero);
  if (type != onnx::TensorProto::UINT8 && type != onnx::TensorProto::INT8) {
    builder.fail("E1336").hint("quantize to INT8 or UINT8") << "output codes of type " << data_type_name(type)
                                                           << " are not supported (supported: UINT8, INT8)";
  }
  Value s = real_operand(builder, scale);
  std::string expr = "round(" + acc.expr + " / " + operand(s) + ")";
  if (!absent_or_zero(builder, zero)) expr += " + " + operand(real_operand(builder, zero));
  const bool is_unsigned = type == onnx::TensorProto::UINT8;
  return std::string("min(max(") + expr + (is_unsigned ? ", 0.0), 255.0)" : ", -128.0), 127.0)");
}

// Translates the current node as `op` (MatMul, Conv) of `operands`, keeping its attributes
// `kept`; returns the value the translator defines.
Value translate_as(Builder& builder, const std::string& op, const std::vector<Value>& operands,
                   std::initializer_list<std::string_view> kept) {
  static const std::map<std::string, Translator> products = [] {
    std::map<std::string, Translator> made;
    add_contraction_translators(made);
    add_conv_translators(made);
    return made;
  }();
  const onnx::NodeProto* original = builder.node;
  onnx::NodeProto node;
  node.set_name(original->name());
  node.set_op_type(op);
  for (size_t i = 0; i < operands.size(); ++i) {
    std::string name = original->output(0) + "\x01" + op + std::to_string(i);  // no ONNX name holds \x01
    builder.define_value(name, operands[i]);
    node.add_input(name);
  }
  node.add_output(original->output(0));
  for (const onnx::AttributeProto& attribute : original->attribute()) {
    for (std::string_view name : kept) {
      if (attribute.name() == name) *node.add_attribute() = attribute;
    }
  }
  builder.node = &node;
  products.at(op)(builder);
  builder.node = original;
  return *builder.find(original->output(0));
}

// K, the number of products each output sums, within what INT32 holds exactly (E1304 beyond).
void check_terms(Builder& builder, const Extent& terms) {
  int64_t count = known_extent(builder, terms, "the contracted extent");
  if (count > kMaxExactTerms) {
    builder.fail("E1304").hint("split the contraction") << "each output sums " << count << " products of 8-bit codes, "
                                                        << "which can wrap around INT32 (presk imports at most " << kMaxExactTerms << ")";
  }
}

void translate_matmul_integer(Builder& builder) {
  builder.accept_attributes({});
  const size_t rank_a = onnx_shape(builder.raw_input(0)).size();
  Value a = dequantized(builder, 0, 2, -1, rank_a >= 2 ? rank_a - 2 : 0, "_a");
  Value b = dequantized(builder, 1, 3, -1, onnx_shape(builder.raw_input(1)).size(), "_b");
  if (!a.shape.empty()) check_terms(builder, a.shape.back());
  translate_as(builder, "MatMul", {a, b}, {});
}

void translate_qlinear_matmul(Builder& builder) {
  builder.accept_attributes({});
  const size_t rank_a = onnx_shape(builder.raw_input(0)).size();
  Value a = dequantized(builder, 0, 2, 1, rank_a >= 2 ? rank_a - 2 : 0, "_a");
  Value b = dequantized(builder, 3, 5, 4, onnx_shape(builder.raw_input(3)).size(), "_b");
  if (!a.shape.empty()) check_terms(builder, a.shape.back());
  Value acc = translate_as(builder, "MatMul", {a, b}, {});
  std::string expr = requantized(builder, acc, 6, 7);
  builder.define(0, builder.emit(expr, acc.shape, Kind::R, "_codes"));
}

const std::initializer_list<std::string_view> kConvAttributes = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};

void translate_conv_integer(Builder& builder) {
  builder.accept_attributes(kConvAttributes);
  Value x = dequantized(builder, 0, 2, -1, 1, "_x");
  Value w = dequantized(builder, 1, 3, -1, 0, "_w");
  if (w.shape.size() > 1) check_terms(builder, product(w.shape, 1, w.shape.size()));
  translate_as(builder, "Conv", {x, w}, kConvAttributes);
}

// QLinearConv: the bias (INT32 codes of scale x_scale · w_scale, zero point 0) is added to the
// accumulator before the requantization.
void translate_qlinear_conv(Builder& builder) {
  builder.accept_attributes(kConvAttributes);
  Value x = dequantized(builder, 0, 2, 1, 1, "_x");
  Value w = dequantized(builder, 3, 5, 4, 0, "_w");
  if (w.shape.size() > 1) check_terms(builder, product(w.shape, 1, w.shape.size()));
  std::vector<Value> operands = {x, w};
  if (builder.has_input(8)) {
    Value bias = real_operand(builder, 8);
    Value xs = real_operand(builder, 1), ws = real_operand(builder, 4);
    operands.push_back(builder.emit(bias.expr + " * " + operand(xs) + " * " + operand(ws),
                                    broadcast_shapes(builder, broadcast_shapes(builder, bias.shape, xs.shape), ws.shape),
                                    Kind::R, "_bias"));
  }
  Value acc = translate_as(builder, "Conv", operands, kConvAttributes);
  std::string expr = requantized(builder, acc, 6, 7);
  builder.define(0, builder.emit(expr, acc.shape, Kind::R, "_codes"));
}

void translate_dynamic_quantize(Builder& builder) {
  builder.accept_attributes({});
  const Value& x = real_input(builder, 0);
  const std::string xs = operand(x);
  Value low = builder.emit("min(-max(-" + xs + "), 0.0)", {}, Kind::R, "_min");
  Value high = builder.emit("max(max(" + x.expr + "), 0.0)", {}, Kind::R, "_max");
  Value scale = builder.emit("(" + high.expr + " - " + low.expr + ") / 255", {}, Kind::R, "_scale");
  Value zero = builder.emit("round(min(max(-" + low.expr + " / " + scale.expr + ", 0.0), 255.0))", {}, Kind::R, "_zero_point");
  builder.define(0, builder.emit("min(max(round(" + xs + " / " + scale.expr + ") + " + zero.expr + ", 0.0), 255.0)", x.shape));
  builder.define(1, scale);
  builder.define(2, zero);
}

}  // namespace

void add_integer_translators(std::map<std::string, Translator>& table) {
  table["MatMulInteger"] = translate_matmul_integer;
  table["ConvInteger"] = translate_conv_integer;
  table["QLinearMatMul"] = translate_qlinear_matmul;
  table["QLinearConv"] = translate_qlinear_conv;
  table["DynamicQuantizeLinear"] = translate_dynamic_quantize;
}

}  // namespace presk::onnx_import
