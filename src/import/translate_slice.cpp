// Translators of the operators that select: Slice (step 1) and Gather (an embedding by
// run-time indices along axis 0, or constant indices along any axis).
#include <algorithm>

#include "import/builder.h"

namespace presk::onnx_import {
namespace {

constexpr int64_t kToTheEnd = int64_t{1} << 31;  // an `ends` at least this reaches the end
constexpr size_t kMaxGatherIndices = 256;       // constant indices written as slices

// An ONNX start or end in [−extent, extent] and beyond, as a position in [0, extent].
int64_t clamp_position(int64_t position, int64_t extent) {
  if (position < 0) position = position < -extent ? 0 : position + extent;
  return std::min(position, extent);
}

std::vector<int64_t> slice_operand(Builder& builder, int index, const char* attribute, const char* role) {
  if (builder.opset < 10) {
    auto values = builder.ints_attribute(attribute);
    return values.value_or(std::vector<int64_t>{});
  }
  if (!builder.has_input(index)) return {};
  return builder.constant_input(index, role).integers();
}

// `x[items…]`: one item per leading axis.
std::string indexed(const Value& x, const std::vector<std::string>& items) {
  std::string expr = x.expr + "[";
  for (size_t i = 0; i < items.size(); ++i) expr += (i == 0 ? "" : ", ") + items[i];
  return expr + "]";
}

// Slice's starts or ends: attributes before opset 10, operands from 10 (expressions of the
// dims when computed from the inputs' extents).
std::vector<SymInt> slice_bounds(Builder& builder, int index, const char* attribute, const char* role) {
  std::vector<SymInt> bounds;
  if (builder.opset < 10) {
    for (int64_t value : builder.ints_attribute(attribute).value_or(std::vector<int64_t>{})) bounds.push_back(SymInt::of(value));
  } else if (builder.has_input(index)) {
    bounds = builder.symbolic_input(index, role);
  }
  return bounds;
}

// An ONNX start or end as a position in [0, extent]: negative known bounds count from the end,
// known bounds past the end clamp; a symbolic bound is taken as it is (the language checks
// it against the extent when the dims are bound).
SymInt slice_position(const SymInt& bound, const SymInt& extent) {
  if (bound.is_known() && extent.is_known()) return SymInt::of(clamp_position(bound.value(), extent.value()));
  if (bound.is_known() && bound.value() < 0) {
    SymInt position = extent + bound;
    return compare(position, SymInt::of(0)).value_or(0) < 0 ? SymInt::of(0) : position;
  }
  if (bound.is_known() && bound.value() >= kToTheEnd) return extent;
  return compare(bound, extent).value_or(0) > 0 ? extent : bound;
}

void translate_slice(Builder& builder) {
  builder.accept_attributes(builder.opset < 10 ? std::initializer_list<std::string_view>{"starts", "ends", "axes"}
                                               : std::initializer_list<std::string_view>{});
  Value x = tensor_input(builder, 0);
  size_t rank = x.shape.size();
  std::vector<SymInt> starts = slice_bounds(builder, 1, "starts", "the starts");
  std::vector<SymInt> ends = slice_bounds(builder, 2, "ends", "the ends");
  std::vector<int64_t> axes = slice_operand(builder, 3, "axes", "the axes");
  std::vector<int64_t> steps = builder.opset < 10 ? std::vector<int64_t>{} : slice_operand(builder, 4, "", "the steps");
  if (axes.empty()) for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (starts.size() != ends.size() || axes.size() != starts.size() || (!steps.empty() && steps.size() != starts.size())) {
    builder.fail("E1303") << "starts, ends, axes and steps differ in length";
  }
  std::vector<std::string> items(rank, ":");
  Shape shape = x.shape;
  size_t last = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (!steps.empty() && steps[i] != 1) builder.fail("E1303") << "step " << steps[i] << " is not supported (supported: 1)";
    int64_t axis = builder.normalize_axis(axes[i], rank, "axis");
    SymInt extent = SymInt::of(x.shape[axis]);
    SymInt start = slice_position(starts[i], extent), stop = slice_position(ends[i], extent);
    if (start == SymInt::of(0) && stop == extent) continue;  // the whole axis
    std::optional<int> order = compare(stop, start);
    if (order && *order <= 0) builder.fail("E1303") << "the slice of axis " << axis << " is empty; presk has no empty tensors";
    std::optional<Extent> length = (stop - start).extent();
    if (!length) {
      builder.fail("E1313").hint("presk's extents are products of dims and numbers; bind a dim with --dim NAME=N")
          << "the slice " << start.text() << " : " << stop.text() << " of axis " << axis << " (extent "
          << extent.text() << ") has the extent " << (stop - start).text() << ", not a product of dims";
    }
    items[axis] = start.text() + " : " + stop.text();
    shape[axis] = *length;
    last = std::max(last, static_cast<size_t>(axis) + 1);
  }
  if (last == 0) return builder.define(0, x);
  items.resize(last);
  builder.define(0, builder.emit(indexed(x, items), shape, x.kind));
}

// Gather with constant indices: each index a slice, joined along the axis, then shaped
// data[:axis] + indices + data[axis+1:].
void gather_constant(Builder& builder, const Value& data, int64_t axis, const Constant& indices) {
  int64_t extent = known_extent(builder, data.shape[axis], "the gathered axis");
  if (indices.element_count() > kMaxGatherIndices || indices.element_count() == 0) {
    builder.fail("E1303") << "constant indices: 1 to " << kMaxGatherIndices << " are supported, not " << indices.element_count();
  }
  std::vector<std::string> positions;
  for (int64_t index : indices.integers()) {
    if (index < -extent || index >= extent) builder.fail("E1303") << "index " << index << " is outside an axis of extent " << extent;
    positions.push_back(std::to_string(index < 0 ? index + extent : index));
  }
  std::vector<std::string> items(axis, ":");
  Shape shape(data.shape.begin(), data.shape.begin() + axis);
  for (int64_t extent_of_index : indices.shape) shape.push_back(Extent{extent_of_index, {}});
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  if (indices.shape.empty()) {  // a scalar index drops the axis
    items.push_back(positions[0]);
    return builder.define(0, builder.emit(indexed(data, items), shape, data.kind));
  }
  Shape joined = data.shape;
  joined[axis] = Extent{static_cast<int64_t>(positions.size()), {}};
  std::string expr;
  for (const std::string& position : positions) {
    std::vector<std::string> one = items;
    one.push_back(position + " : " + std::to_string(std::stoll(position) + 1));
    expr += (expr.empty() ? "" : ", ") + indexed(data, one);
  }
  if (positions.size() > 1) expr = "concat(" + expr + ", axis: " + std::to_string(axis) + ")";
  Value value = builder.emit(expr, joined, data.kind);
  builder.define(0, reshaped(builder, value, shape, "_shape"));
}

void translate_gather(Builder& builder) {
  builder.accept_attributes({"axis"});
  const Value& raw = builder.raw_input(1);
  if (raw.constant && raw.expr.empty()) {
    Value data = tensor_input(builder, 0);
    int64_t axis = builder.normalize_axis(builder.int_attribute("axis", 0), data.shape.size(), "axis");
    return gather_constant(builder, data, axis, *raw.constant);
  }
  Value table = tensor_input(builder, 0);
  const Value& indices = builder.input(1);
  int64_t axis = builder.normalize_axis(builder.int_attribute("axis", 0), table.shape.size(), "axis");
  if (axis != 0 || indices.kind != Kind::Z || table.kind != Kind::R) {
    builder.fail("E1303").hint("run-time indices are supported as an embedding: axis 0 of a float table, INT64/INT32 indices")
        << "Gather along axis " << axis << " with run-time indices is not supported";
  }
  Shape shape = indices.shape;
  shape.insert(shape.end(), table.shape.begin() + 1, table.shape.end());
  builder.define(0, builder.emit("embed(" + table.expr + ", " + indices.expr + ")", shape));
}

}  // namespace

void add_slice_translators(std::map<std::string, Translator>& table) {
  table["Slice"] = translate_slice;
  table["Gather"] = translate_gather;
}

}  // namespace presk::onnx_import
