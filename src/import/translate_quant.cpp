// Translators of ONNX's linear quantization (QuantizeLinear, DequantizeLinear) with their exact
// meaning, and their removal under `--strip-qdq` (docs/import.md, "Quantized models").
//   QuantizeLinear:   y = clamp(round(x / scale) + zero_point, lo, hi), round ties to even,
//                     [lo, hi] the codes' range (UINT8 [0, 255], INT8 [−128, 127]);
//   DequantizeLinear: y = (x − zero_point) · scale.
// The codes are reals that hold integers (R): presk's element kinds are the realization's
// choice, so a code is the integer itself, not a byte.
#include <algorithm>
#include <cmath>

#include "import/builder.h"
#include "import/onnx_reader.h"
#include "ir/ir.h"

namespace presk::onnx_import {
namespace {

struct CodeRange {
  double low, high;
};

// The range of the codes of `data_type` (E1336 for another type).
CodeRange code_range(const Builder& builder, int data_type, bool dequantize) {
  switch (data_type) {
    case onnx::TensorProto::UINT8: return {0, 255};
    case onnx::TensorProto::INT8: return {-128, 127};
    case onnx::TensorProto::INT32:
      if (dequantize) return {-2147483648.0, 2147483647.0};
      break;
    default: break;
  }
  builder.fail("E1336").hint("quantize to INT8 or UINT8 (ONNX Runtime's quantizer: QuantType.QInt8, QUInt8)")
      << "codes of type " << data_type_name(data_type) << " are not supported (supported: UINT8, INT8"
      << (dequantize ? ", INT32" : "") << ")";
  return {};
}

// The forms of opset 21 presk does not import: blocked quantization, an output_dtype.
void check_attributes(Builder& builder) {
  builder.accept_attributes({"axis", "saturate", "block_size", "output_dtype"});
  if (builder.int_attribute("block_size", 0) != 0) {
    builder.fail("E1336").hint("quantize per tensor or per axis") << "blocked quantization (block_size "
                                                                 << builder.int_attribute("block_size", 0) << ") is not supported";
  }
  if (builder.int_attribute("output_dtype", 0) != 0) {
    builder.fail("E1336").hint("give the codes' type by the zero point") << "output_dtype is not supported";
  }
}

// Operand `index` (a scale or a zero point) laid along `axis` of a value of `rank` axes: a
// single element as it is (per tensor), a vector of the axis's extent reshaped to [C, 1, …]
// (per axis). Zero points are integer constants, read as reals.
Value along_axis(Builder& builder, int index, size_t rank, int64_t axis, const Extent& extent) {
  Value& raw = builder.raw_input(index);
  Shape shape = onnx_shape(raw);
  bool per_axis = shape.size() == 1 && !(shape[0] == Extent{1, {}});
  if (!shape.empty() && !per_axis && !(shape.size() == 1)) {
    builder.fail("E1336").hint("quantize per tensor (a scalar) or per axis (a vector)")
        << "operand " << index << " has the shape " << shape_list(shape) << "; blocked quantization is not supported";
  }
  if (per_axis && !(shape[0] == extent)) {
    builder.fail("E1308") << "operand " << index << " has " << extent_text(shape[0]) << " elements for an axis of extent "
                          << extent_text(extent);
  }
  Value value;
  if (raw.constant && raw.expr.empty() && !raw.constant->is_float()) {
    if (raw.constant->is_symbolic()) builder.fail("E1305") << "operand " << index << " is symbolic";
    Constant real = *raw.constant;
    real.data_type = onnx::TensorProto::FLOAT;  // the integers, exactly
    value = builder.materialize(real);
  } else if (raw.kind == Kind::Z) {  // run-time integer codes, exactly as reals
    const Value& codes = builder.input(index);
    value = builder.emit(operand(codes) + " + 0.0", codes.shape, Kind::R, "_real" + std::to_string(index));
  } else {
    if (raw.kind != Kind::R) builder.fail("E1304") << "operand " << index << " must be a numeric tensor";
    value = builder.input(index);
  }
  if (!per_axis) return value.shape.empty() ? value : reshaped(builder, value, Shape{}, "_scalar" + std::to_string(index));
  Shape laid(rank - static_cast<size_t>(axis), Extent{1, {}});
  laid[0] = extent;
  return reshaped(builder, value, laid, "_axis" + std::to_string(index));
}

// The `axis` attribute normalized for a value of `rank` axes; ignored (0) when the scale is a
// single element (per tensor), as ONNX ignores it, so the default 1 fits a vector too.
int64_t quant_axis(Builder& builder, int64_t attribute, size_t rank) {
  const Shape scale = onnx_shape(builder.raw_input(1));
  if (scale.empty() || (scale.size() == 1 && scale[0] == Extent{1, {}})) return 0;
  return builder.normalize_axis(attribute, std::max<size_t>(rank, 1), "axis");
}

}  // namespace

bool absent_or_zero(const Builder& builder, int index) {
  if (!builder.has_input(index)) return true;
  const Value* value = builder.find(builder.node->input(index));
  if (value == nullptr || !value->constant || !value->expr.empty() || value->constant->is_symbolic()) return false;
  for (double element : value->constant->values()) {
    if (element != 0) return false;
  }
  return true;
}

namespace {

int code_type(Builder& builder) {
  if (!builder.has_input(2)) return onnx::TensorProto::UINT8;
  const Value& zero_point = builder.raw_input(2);
  if (zero_point.constant) return zero_point.constant->data_type;
  // Computed at run time: the type the graph states, or a Cast of floats gave it.
  const std::string& name = builder.node->input(2);
  auto cast = builder.integer_reals.find(name);
  if (cast != builder.integer_reals.end()) return cast->second;
  auto stated = builder.element_types.find(name);
  if (stated == builder.element_types.end()) {
    builder.fail("E1305").hint("state the zero point's type in the graph (value_info), or make it a constant")
        << "the zero point (operand 2) is computed at run time and its type is not stated";
  }
  return stated->second;
}

void translate_quantize(Builder& builder) {
  check_attributes(builder);
  if (builder.stripped_quantize.count(builder.node->output(0)) > 0) {  // --strip-qdq
    return builder.define(0, builder.raw_input(0));
  }
  CodeRange range = code_range(builder, code_type(builder), false);
  Value x = tensor_input(builder, 0);
  if (x.kind != Kind::R) builder.fail("E1304") << "operand 0 must be a float tensor";
  int64_t axis = quant_axis(builder, builder.int_attribute("axis", 1), x.shape.size());
  Extent extent = x.shape.empty() ? Extent{1, {}} : x.shape[static_cast<size_t>(axis)];
  Value scale = along_axis(builder, 1, x.shape.size(), axis, extent);
  std::string expr = "round(" + operand(x) + " / " + operand(scale) + ")";
  std::vector<const Value*> operands{&x, &scale};
  Value zero_point;
  if (!absent_or_zero(builder, 2)) {
    zero_point = along_axis(builder, 2, x.shape.size(), axis, extent);
    expr += " + " + operand(zero_point);
    operands.push_back(&zero_point);
  }
  expr = "min(max(" + expr + ", " + ir::real_to_string(range.low) + "), " + ir::real_to_string(range.high) + ")";
  define_elementwise(builder, expr, operands);
}

// A DequantizeLinear of constant codes under --strip-qdq: the float weight (codes − zero
// point) · scale computed at import (exact in binary64: an integer of at most 32 bits times a
// binary32 or binary64 scale, the latter rounded once).
bool fold_dequantize(Builder& builder, int64_t axis_attribute) {
  const Value& codes = builder.raw_input(0);
  if (!codes.constant || !codes.expr.empty() || codes.constant->is_float() || codes.constant->is_symbolic()) return false;
  const Value& scale = builder.raw_input(1);
  if (!scale.constant || !scale.expr.empty() || scale.constant->is_symbolic()) return false;
  const Constant& c = *codes.constant;
  const Constant* zero = builder.has_input(2) ? builder.raw_input(2).constant.get() : nullptr;
  if (builder.has_input(2) && (zero == nullptr || zero->is_symbolic())) return false;
  size_t rank = std::max<size_t>(c.shape.size(), 1);
  int64_t axis = builder.normalize_axis(axis_attribute, rank, "axis");
  int64_t inner = 1, extent = c.shape.empty() ? 1 : c.shape[static_cast<size_t>(axis)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < c.shape.size(); ++i) inner *= c.shape[i];
  auto at = [&](const std::vector<double>& values, size_t i) {
    if (values.size() == 1) return values[0];
    if (static_cast<int64_t>(values.size()) != extent) builder.fail("E1336") << "a scale or zero point of " << values.size()
                                                                             << " elements for an axis of extent " << extent;
    return values[(i / static_cast<size_t>(inner)) % static_cast<size_t>(extent)];
  };
  Constant weight;
  weight.shape = c.shape;
  weight.data_type = onnx::TensorProto::DOUBLE;
  weight.onnx_name = builder.node->output(0);
  std::vector<double>& out = weight.mutable_values();
  const std::vector<double>& stored = c.values();
  out.resize(stored.size());
  for (size_t i = 0; i < stored.size(); ++i) {
    out[i] = (stored[i] - (zero ? at(zero->values(), i) : 0.0)) * at(scale.constant->values(), i);
  }
  builder.define(0, Value{"", {}, Kind::R, std::make_shared<Constant>(std::move(weight))});
  return true;
}

void translate_dequantize(Builder& builder) {
  check_attributes(builder);
  int64_t axis_attribute = builder.int_attribute("axis", 1);
  if (builder.options.strip_qdq) {
    if (builder.stripped_quantize.count(builder.node->input(0)) > 0) return builder.define(0, builder.raw_input(0));
    if (fold_dequantize(builder, axis_attribute)) return;
  }
  const Value& codes_raw = builder.raw_input(0);
  if (codes_raw.constant && codes_raw.expr.empty()) code_range(builder, codes_raw.constant->data_type, true);
  Value codes;
  if (codes_raw.constant && codes_raw.expr.empty() && !codes_raw.constant->is_float()) {
    Constant real = *codes_raw.constant;  // the integer codes as a parameter of reals
    real.data_type = onnx::TensorProto::FLOAT;
    codes = builder.materialize(real);
  } else {
    codes = tensor_input(builder, 0);
  }
  int64_t axis = quant_axis(builder, axis_attribute, codes.shape.size());
  Extent extent = codes.shape.empty() ? Extent{1, {}} : codes.shape[static_cast<size_t>(axis)];
  Value scale = along_axis(builder, 1, codes.shape.size(), axis, extent);
  std::vector<const Value*> operands{&codes, &scale};
  std::string shifted = operand(codes);
  Value zero_point;
  if (!absent_or_zero(builder, 2)) {
    zero_point = along_axis(builder, 2, codes.shape.size(), axis, extent);
    shifted = "(" + shifted + " - " + operand(zero_point) + ")";
    operands.push_back(&zero_point);
  }
  define_elementwise(builder, shifted + " * " + operand(scale), operands);
}

}  // namespace

void add_quant_translators(std::map<std::string, Translator>& table) {
  table["QuantizeLinear"] = translate_quantize;
  table["DequantizeLinear"] = translate_dequantize;
}

}  // namespace presk::onnx_import
