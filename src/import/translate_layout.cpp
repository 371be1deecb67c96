// Translators of the operators that move values: Transpose, Reshape, Flatten, Squeeze,
// Unsqueeze, Concat, Split, Slice, Gather, Identity, Constant and Shape (Cast: translate_cast.cpp). Shape
// computations on constants (Shape, Unsqueeze, Concat, Gather of integers) fold at import.
#include <algorithm>
#include <cmath>

#include "import/builder.h"
#include "import/onnx_reader.h"

namespace presk::onnx_import {
namespace {

constexpr size_t kFoldLimit = 64;  // elements: a float constant this small is folded, not moved

std::string int_list(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  return text + "]";
}

// A constant operand that a layout op would only move: folded when it is integral (shape
// arithmetic) or small.
const Constant* foldable(Builder& builder, int index) {
  const Value& value = builder.raw_input(index);
  if (!value.constant || !value.expr.empty()) return nullptr;
  if (value.constant->is_float() && value.constant->element_count() > kFoldLimit) return nullptr;
  return value.constant.get();
}

void define_constant(Builder& builder, Constant constant) {
  constant.onnx_name = builder.node->output(0);
  builder.define(0, Value{"", {}, Kind::R, std::make_shared<Constant>(std::move(constant))});
}

Shape known_shape(const std::vector<int64_t>& extents) {
  Shape shape;
  for (int64_t extent : extents) shape.push_back(Extent{extent, {}});
  return shape;
}

std::vector<int64_t> known_extents(const Builder& builder, const Shape& shape) {
  std::vector<int64_t> extents;
  for (const Extent& extent : shape) extents.push_back(known_extent(builder, extent, "an axis"));
  return extents;
}

// The shape of the current node's operand 0 (a constant's own shape when not materialized).
Shape operand_shape(Builder& builder) {
  const Value& value = builder.raw_input(0);
  return value.expr.empty() ? known_shape(value.constant->shape) : onnx_shape(value);
}

// Defines output 0 as operand 0 with `shape`: a folded constant, or a reshape.
void define_reshaped(Builder& builder, const Shape& shape) {
  if (const Constant* constant = foldable(builder, 0)) {
    Constant folded = *constant;
    folded.shape = known_extents(builder, shape);
    return define_constant(builder, folded);
  }
  builder.define(0, reshaped(builder, tensor_input(builder, 0), shape));
}

void translate_identity(Builder& builder) {
  builder.accept_attributes({});
  builder.define(0, builder.raw_input(0));
}

void translate_constant(Builder& builder) {
  if (builder.node->attribute_size() != 1) builder.fail("E1303") << "a Constant needs exactly one attribute";
  const onnx::AttributeProto& attribute = builder.node->attribute(0);
  Constant constant;
  if (attribute.name() == "value" && attribute.has_t()) {
    constant = *decode_tensor(attribute.t(), builder.node_label(), builder.tensor_source);
  } else if (attribute.name() == "value_float") {
    constant.mutable_values() = {attribute.f()};
    constant.data_type = onnx::TensorProto::FLOAT;
  } else if (attribute.name() == "value_floats") {
    constant.mutable_values().assign(attribute.floats().begin(), attribute.floats().end());
    constant.shape = {static_cast<int64_t>(constant.element_count())};
    constant.data_type = onnx::TensorProto::FLOAT;
  } else if (attribute.name() == "value_int") {
    constant.mutable_values() = {static_cast<double>(attribute.i())};
    constant.data_type = onnx::TensorProto::INT64;
  } else if (attribute.name() == "value_ints") {
    for (int64_t value : attribute.ints()) constant.mutable_values().push_back(static_cast<double>(value));
    constant.shape = {static_cast<int64_t>(constant.element_count())};
    constant.data_type = onnx::TensorProto::INT64;
  } else {
    builder.fail("E1303") << "attribute `" << printable(attribute.name())
                          << "` is not supported (supported: value, value_float, value_floats, value_int, value_ints)";
  }
  define_constant(builder, constant);
}

// The extents as import-time integers, symbolic ones as expressions of the dims.
void translate_shape(Builder& builder) {
  builder.accept_attributes({"start", "end"});
  Shape extents = operand_shape(builder);
  int64_t rank = static_cast<int64_t>(extents.size());
  int64_t start = builder.int_attribute("start", 0), end = builder.int_attribute("end", rank);
  start = std::clamp(start, -rank, rank);
  end = std::clamp(end, -rank, rank);
  start = start < 0 ? start + rank : start;
  end = std::max(end < 0 ? end + rank : end, start);
  Constant constant;
  constant.data_type = onnx::TensorProto::INT64;
  bool symbolic = false;
  for (int64_t i = start; i < end; ++i) {
    symbolic = symbolic || !extents[i].is_known();
    constant.mutable_values().push_back(extents[i].is_known() ? static_cast<double>(extents[i].factor) : NAN);
    constant.symbols.push_back(SymInt::of(extents[i]));
  }
  if (!symbolic) constant.symbols.clear();
  constant.shape = {end - start};
  define_constant(builder, constant);
}

// Size: the element count, known at import (an expression of the dims when they are symbolic).
void translate_size(Builder& builder) {
  builder.accept_attributes({});
  Shape extents = operand_shape(builder);
  Extent count = product(extents, 0, extents.size());
  Constant constant;
  constant.data_type = onnx::TensorProto::INT64;
  constant.mutable_values() = {count.is_known() ? static_cast<double>(count.factor) : NAN};
  if (!count.is_known()) constant.symbols = {SymInt::of(count)};
  define_constant(builder, constant);
}

// EyeLike: ones on the k-th diagonal of the operand's (known) matrix shape, zeros elsewhere: a
// constant, of the `dtype` attribute's type or else the operand's kind (FLOAT, INT64, BOOL).
void translate_eye_like(Builder& builder) {
  builder.accept_attributes({"dtype", "k"});
  Shape extents = operand_shape(builder);
  if (extents.size() != 2) builder.fail("E1308") << "EyeLike needs a matrix";
  int64_t rows = known_extent(builder, extents[0], "the rows"), columns = known_extent(builder, extents[1], "the columns");
  int64_t k = builder.int_attribute("k", 0);
  Kind kind = builder.raw_input(0).kind;
  Constant constant;
  constant.data_type = static_cast<int>(builder.int_attribute(
      "dtype", kind == Kind::Z ? onnx::TensorProto::INT64 : kind == Kind::B ? onnx::TensorProto::BOOL : onnx::TensorProto::FLOAT));
  constant.shape = {rows, columns};
  constant.onnx_name = builder.node->output(0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < columns; ++j) constant.mutable_values().push_back(j - i == k ? 1.0 : 0.0);
  }
  builder.define(0, Value{"", {}, Kind::R, std::make_shared<Constant>(constant)});
}

void translate_transpose(Builder& builder) {
  builder.accept_attributes({"perm"});
  Value x = tensor_input(builder, 0);
  size_t rank = x.shape.size();
  std::vector<int64_t> perm;
  if (auto given = builder.ints_attribute("perm")) perm = *given;
  else for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted.size() != rank || sorted[i] != static_cast<int64_t>(i)) builder.fail("E1303") << "perm " << int_list(perm) << " is not a permutation of the axes";
  }
  Shape shape;
  for (int64_t axis : perm) shape.push_back(x.shape[axis]);
  builder.define(0, builder.emit("transpose(" + x.expr + ", " + int_list(perm) + ")", shape, x.kind));
}

void translate_reshape(Builder& builder) {
  builder.accept_attributes({"allowzero"});
  Shape from = operand_shape(builder);
  std::vector<SymInt> wanted = builder.symbolic_input(1, "the shape");
  bool allow_zero = builder.int_attribute("allowzero", 0) != 0;
  Shape shape;
  int inferred = -1;
  std::string listed;
  for (const SymInt& extent : wanted) listed += (listed.empty() ? "" : ", ") + extent.text();
  for (size_t i = 0; i < wanted.size(); ++i) {
    std::optional<Extent> extent = wanted[i].extent();
    int64_t known = wanted[i].is_known() ? wanted[i].value() : 1;
    if (!extent && !wanted[i].is_known()) {
      builder.fail("E1313").hint("presk's extents are products of dims and numbers; bind a dim with --dim NAME=N")
          << "extent " << i << " of the shape [" << listed << "] is " << wanted[i].text() << ", not a product of dims";
    }
    if (known == 0 && !allow_zero && i < from.size()) shape.push_back(from[i]);
    else if (known == -1 && inferred < 0) inferred = static_cast<int>(i), shape.push_back(Extent{});
    else if (known > 0 && extent->factor <= (int64_t{1} << 40)) shape.push_back(*extent);
    else builder.fail("E1303") << "the shape [" << listed << "] is not supported (extents > 0, one -1, 0 copies)";
  }
  Extent total = product(from, 0, from.size());
  if (inferred >= 0) {
    std::optional<Extent> rest = divided(total, product(shape, 0, shape.size()));
    if (!rest) builder.fail("E1308") << "cannot infer the -1 of [" << listed << "] from " << shape_list(from);
    shape[inferred] = *rest;
  }
  if (!(product(shape, 0, shape.size()) == total)) {
    builder.fail("E1308") << "cannot reshape " << shape_list(from) << " to " << shape_list(shape);
  }
  define_reshaped(builder, shape);
}

void translate_flatten(Builder& builder) {
  builder.accept_attributes({"axis"});
  Shape from = operand_shape(builder);
  int64_t rank = static_cast<int64_t>(from.size());
  int64_t axis = builder.int_attribute("axis", 1);
  if (axis < -rank || axis > rank) builder.fail("E1303") << "axis " << axis << " is outside [" << -rank << ", " << rank << "]";
  if (axis < 0) axis += rank;
  define_reshaped(builder, {product(from, 0, axis), product(from, axis, rank)});
}

// Squeeze/Unsqueeze's axes: the attribute before opset 13, operand 1 from 13 on.
std::optional<std::vector<int64_t>> squeeze_axes(Builder& builder) {
  if (builder.opset < 13) return builder.ints_attribute("axes");
  if (!builder.has_input(1)) return std::nullopt;
  return builder.constant_input(1, "the axes").integers();
}

void translate_squeeze(Builder& builder) {
  builder.accept_attributes(builder.opset < 13 ? std::initializer_list<std::string_view>{"axes"}
                                               : std::initializer_list<std::string_view>{});
  Shape from = operand_shape(builder);
  std::optional<std::vector<int64_t>> axes = squeeze_axes(builder);
  std::vector<bool> drop(from.size(), false);
  for (size_t i = 0; i < from.size(); ++i) drop[i] = !axes && from[i] == Extent{};
  for (int64_t axis : axes.value_or(std::vector<int64_t>{})) {
    int64_t a = builder.normalize_axis(axis, from.size(), "axis");
    if (!(from[a] == Extent{})) builder.fail("E1308") << "axis " << axis << " has extent " << extent_text(from[a]) << ", not 1";
    drop[a] = true;
  }
  Shape shape;
  for (size_t i = 0; i < from.size(); ++i) if (!drop[i]) shape.push_back(from[i]);
  define_reshaped(builder, shape);
}

void translate_unsqueeze(Builder& builder) {
  builder.accept_attributes(builder.opset < 13 ? std::initializer_list<std::string_view>{"axes"}
                                               : std::initializer_list<std::string_view>{});
  Shape from = operand_shape(builder);
  std::optional<std::vector<int64_t>> axes = squeeze_axes(builder);
  if (!axes || axes->empty()) builder.fail("E1303") << "Unsqueeze needs its axes";
  size_t rank = from.size() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : *axes) {
    int64_t a = builder.normalize_axis(axis, rank, "axis");
    if (inserted[a]) builder.fail("E1303") << "axis " << axis << " is given twice";
    inserted[a] = true;
  }
  Shape shape;
  for (size_t i = 0, k = 0; i < rank; ++i) shape.push_back(inserted[i] ? Extent{} : from[k++]);
  define_reshaped(builder, shape);
}

void translate_concat(Builder& builder) {
  builder.accept_attributes({"axis"});
  if (builder.input_count() == 0) builder.fail("E1309") << "Concat needs at least one operand";
  std::vector<Value> parts;
  for (size_t i = 0; i < builder.input_count(); ++i) parts.push_back(tensor_input(builder, static_cast<int>(i)));
  Shape shape = parts[0].shape;
  int64_t axis = builder.normalize_axis(builder.int_attribute("axis", 0), shape.size(), "axis");
  std::string expr = "concat(";
  for (size_t i = 0; i < parts.size(); ++i) {
    Shape other = parts[i].shape;
    if (other.size() != shape.size()) builder.fail("E1308") << "the operands of Concat differ in rank";
    for (size_t a = 0; a < shape.size(); ++a) {
      if (static_cast<int64_t>(a) != axis && !(other[a] == shape[a])) builder.fail("E1308") << "the operands of Concat differ on axis " << a;
    }
    if (i > 0) shape[axis] = Extent{known_extent(builder, shape[axis], "the concatenated axis") +
                                        known_extent(builder, other[axis], "the concatenated axis"), {}};
    expr += parts[i].expr + ", ";
  }
  if (parts.size() == 1) return builder.define(0, parts[0]);
  builder.define(0, builder.emit(expr + "axis: " + std::to_string(axis) + ")", shape, parts[0].kind));
}

// `x[:, …, start : stop]` along `axis` (a single position `i` drops the axis).
std::string slice_expr(const Value& x, int64_t axis, const std::string& item) {
  std::string expr = x.expr + "[";
  for (int64_t i = 0; i < axis; ++i) expr += ":, ";
  return expr + item + "]";
}

std::string range_item(int64_t start, int64_t stop) { return std::to_string(start) + " : " + std::to_string(stop); }

void translate_split(Builder& builder) {
  builder.accept_attributes(builder.opset < 13 ? std::initializer_list<std::string_view>{"axis", "split"}
                                               : std::initializer_list<std::string_view>{"axis"});
  Value x = tensor_input(builder, 0);
  int64_t axis = builder.normalize_axis(builder.int_attribute("axis", 0), x.shape.size(), "axis");
  int64_t extent = known_extent(builder, x.shape[axis], "the split axis");
  std::optional<std::vector<int64_t>> sizes = builder.opset < 13 ? builder.ints_attribute("split")
      : builder.has_input(1) ? std::optional(builder.constant_input(1, "the split sizes").integers()) : std::nullopt;
  int64_t parts = builder.node->output_size();
  if (!sizes) {
    if (parts <= 0 || extent % parts != 0) builder.fail("E1303") << "extent " << extent << " does not split into " << parts << " equal parts";
    sizes = std::vector<int64_t>(parts, extent / parts);
  }
  int64_t total = 0;
  for (int64_t size : *sizes) total += (size > 0 && size <= extent) ? size : extent + 1;
  if (static_cast<int64_t>(sizes->size()) != parts || total != extent) {
    builder.fail("E1303") << "the split sizes " << int_list(*sizes) << " do not cover extent " << extent << " in " << parts << " parts";
  }
  int64_t start = 0;
  for (int64_t i = 0; i < parts; ++i) {
    Shape shape = x.shape;
    shape[axis] = Extent{(*sizes)[i], {}};
    int64_t stop = start + (*sizes)[i];
    if (!builder.node->output(i).empty()) {
      builder.define(i, builder.emit(slice_expr(x, axis, range_item(start, stop)), shape, x.kind, "_" + std::to_string(i)));
    }
    start = stop;
  }
}

}  // namespace

void add_layout_translators(std::map<std::string, Translator>& table) {
  table["Identity"] = translate_identity;
  table["Constant"] = translate_constant;
  table["Shape"] = translate_shape;
  table["Size"] = translate_size;
  table["EyeLike"] = translate_eye_like;
  table["Transpose"] = translate_transpose;
  table["Reshape"] = translate_reshape;
  table["Flatten"] = translate_flatten;
  table["Squeeze"] = translate_squeeze;
  table["Unsqueeze"] = translate_unsqueeze;
  table["Concat"] = translate_concat;
  table["Split"] = translate_split;
  add_slice_translators(table);
}

}  // namespace presk::onnx_import
