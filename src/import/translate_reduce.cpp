// Translators of the reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL1,
// ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, ReduceProd, CumSum; axes an attribute, or an operand
// for ReduceSum from opset 13 and every Reduce from 18; Einsum: translate_einsum.cpp), and
// the layout operators with constant operands: Tile, Expand, DepthToSpace, SpaceToDepth and
// Trilu. Each is an exact composition of presk primitives (docs/import.md).
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "import/builder.h"

namespace presk::onnx_import {

std::string slice_text(const std::string& x, size_t axis, int64_t from, int64_t to) {
  std::string expr = x + "[";
  for (size_t i = 0; i < axis; ++i) expr += ":, ";
  return expr + std::to_string(from) + " : " + std::to_string(to) + "]";
}

// Π of the n elements along `axis`: the first half times the second while n > 1, an odd
// element set aside and multiplied in at the end. Every product is of reals, so the exact
// reference computes ONNX's product exactly; a realization rounds each multiplication.
Value product_along(Builder& builder, const Value& x, size_t axis, const std::string& suffix) {
  int64_t n = known_extent(builder, x.shape[axis], "the extent of a multiplied axis");
  if (n < 1) builder.fail("E1303") << "a product over an empty axis is not supported";
  Value current = x;
  std::vector<std::string> odd;
  for (int step = 0; n > 1; ++step) {
    const int64_t half = n / 2;
    if (n % 2 == 1) {
      Shape one = current.shape;
      one[axis] = Extent{1, {}};
      odd.push_back(builder.emit(slice_text(current.expr, axis, n - 1, n), one, Kind::R,
                                 suffix + "_odd" + std::to_string(step)).expr);
    }
    Shape shape = current.shape;
    shape[axis] = Extent{half, {}};
    current = builder.emit(slice_text(current.expr, axis, 0, half) + " * " + slice_text(current.expr, axis, half, 2 * half),
                           shape, Kind::R, suffix + "_half" + std::to_string(step));
    n = half;
  }
  if (odd.empty()) return current;
  std::string expr = current.expr;
  for (const std::string& factor : odd) expr += " * " + factor;
  return builder.emit(expr, current.shape, Kind::R, suffix);
}

namespace {

constexpr int64_t kMaxRepeats = 1 << 16;

std::string int_list(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  return text + "]";
}

// The axes a Reduce node reduces: its attribute, or operand 1 (ReduceSum from opset 13, every
// Reduce from 18); none given is every axis. nullopt: none given and noop_with_empty_axes.
std::optional<std::vector<int64_t>> reduce_axes(Builder& builder, size_t rank, bool axes_operand) {
  std::optional<std::vector<int64_t>> axes;
  if (axes_operand) {
    if (builder.has_input(1)) axes = builder.constant_input(1, "the axes").integers();
  } else {
    axes = builder.ints_attribute("axes");
  }
  std::vector<int64_t> result;
  if (!axes || axes->empty()) {
    if (axes_operand && builder.int_attribute("noop_with_empty_axes", 0) != 0) return std::nullopt;
    for (size_t i = 0; i < rank; ++i) result.push_back(static_cast<int64_t>(i));
    return result;
  }
  for (int64_t axis : *axes) result.push_back(builder.normalize_axis(axis, rank, "axis"));
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

// `pattern` with X the operand and A the end of a reduction call (`, axis: [...])`, or `)`
// for the scalar form).
std::string fill(const std::string& pattern, const std::string& x, const std::string& over) {
  std::string expr;
  for (char c : pattern) expr += c == 'X' ? x : c == 'A' ? over : std::string(1, c);
  return expr;
}

// A Reduce node: `pattern` over the reduced axes (ReduceLogSumExp: `logsumexp`, two lets).
void translate_reduce(Builder& builder, const std::string& pattern, bool axes_in_13) {
  bool axes_operand = builder.opset >= 18 || (axes_in_13 && builder.opset >= 13);
  if (axes_operand) {
    builder.accept_attributes({"keepdims", "noop_with_empty_axes"});
  } else {
    builder.accept_attributes({"axes", "keepdims"});
  }
  const Value& x = real_input(builder, 0);
  std::optional<std::vector<int64_t>> axes = reduce_axes(builder, x.shape.size(), axes_operand);
  if (!axes) {  // noop_with_empty_axes: the operand, with the elementwise part (ReduceL1's |x|)
    if (pattern == "sum(XA" || pattern == "mean(XA" || pattern == "max(XA" || pattern == "-max(-XA" || pattern == "prod") return builder.define(0, x);
    builder.fail("E1303") << "noop_with_empty_axes with no axes is supported for ReduceSum, ReduceMean, ReduceMax and ReduceMin";
  }
  bool keep = builder.int_attribute("keepdims", 1) != 0;
  Shape kept = x.shape, dropped;
  for (size_t i = 0; i < kept.size(); ++i) {
    bool reduced = std::find(axes->begin(), axes->end(), static_cast<int64_t>(i)) != axes->end();
    if (reduced) kept[i] = Extent{};
    else dropped.push_back(x.shape[i]);
  }
  bool scalar = !keep && dropped.empty();
  std::string over = scalar ? ")" : ", axis: " + int_list(*axes) + ")";
  Shape shape = scalar ? Shape{} : kept;
  Value reduced;
  if (pattern == "prod") {
    reduced = x;
    for (int64_t axis : *axes) reduced = product_along(builder, reduced, static_cast<size_t>(axis), "_axis" + std::to_string(axis));
    if (scalar) reduced = reshaped(builder, reduced, Shape{}, "_scalar");
  } else if (pattern == "logsumexp") {  // m + ln Σ e^(x − m), m the maximum: the same real, no overflow
    Value top = builder.emit("max(" + x.expr + over, shape, Kind::R, "_max");
    reduced = builder.emit(top.expr + " + log(sum(exp(" + x.expr + " - " + top.expr + ")" + over + ")", shape);
  } else {
    reduced = builder.emit(fill(pattern, x.expr, over), shape);
  }
  builder.define(0, keep || scalar ? reduced : reshaped(builder, reduced, dropped, "_keepdims0"));
}

// x repeated `count` times along `axis`: concat of powers of two (log₂ count lets).
Value repeated(Builder& builder, const Value& x, size_t axis, int64_t count) {
  known_extent(builder, x.shape[axis], "a repeated axis");
  std::vector<Value> parts;
  Value power = x;
  for (int64_t left = count; left > 0; left >>= 1) {
    if ((left & 1) != 0) parts.push_back(power);
    if (left > 1) power = concat_all(builder, {power, power}, static_cast<int64_t>(axis), "_twice");
  }
  return concat_all(builder, parts, static_cast<int64_t>(axis), "_repeated");
}

void translate_tile(Builder& builder) {
  builder.accept_attributes({});
  Value x = tensor_input(builder, 0);
  std::vector<int64_t> repeats = builder.constant_input(1, "the repeats").integers();
  if (repeats.size() != x.shape.size()) builder.fail("E1308") << "repeats has " << repeats.size() << " entries for rank " << x.shape.size();
  for (size_t axis = 0; axis < repeats.size(); ++axis) {
    if (repeats[axis] < 1 || repeats[axis] > kMaxRepeats) builder.fail("E1303") << "repeat " << repeats[axis] << " is outside 1 … " << kMaxRepeats;
    if (repeats[axis] > 1) x = repeated(builder, x, axis, repeats[axis]);
  }
  builder.define(0, x);
}

// Expand: numpy broadcast of x to the constant shape, the stretched axes repeated.
void translate_expand(Builder& builder) {
  builder.accept_attributes({});
  Value x = tensor_input(builder, 0);
  std::vector<int64_t> wanted = builder.constant_input(1, "the shape").integers();
  Shape target;
  for (int64_t extent : wanted) {
    if (extent < 1 || extent > (int64_t{1} << 40)) builder.fail("E1303") << "the shape " << int_list(wanted) << " has an extent outside 1 … 2^40";
    target.push_back(Extent{extent, {}});
  }
  Shape shape = broadcast_shapes(builder, x.shape, target);
  Shape widened = x.shape;
  widened.insert(widened.begin(), shape.size() - x.shape.size(), Extent{});
  x = reshaped(builder, x, widened, "_rank");
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (!(widened[axis] == shape[axis])) x = repeated(builder, x, axis, known_extent(builder, shape[axis], "an expanded axis"));
  }
  builder.define(0, x);
}

// DepthToSpace (DCR or CRD) and SpaceToDepth: a reshape, a transpose, a reshape.
void translate_depth_space(Builder& builder, bool to_space) {
  builder.accept_attributes(to_space ? std::initializer_list<std::string_view>{"blocksize", "mode"}
                                     : std::initializer_list<std::string_view>{"blocksize"});
  Value x = tensor_input(builder, 0);
  if (x.shape.size() != 4) builder.fail("E1308") << "the input must be (N, C, H, W)";
  int64_t b = builder.int_attribute("blocksize", 0);
  int64_t c = known_extent(builder, x.shape[1], "the channel axis");
  int64_t h = known_extent(builder, x.shape[2], "the height"), w = known_extent(builder, x.shape[3], "the width");
  std::string mode = builder.string_attribute("mode", "DCR");
  if (b < 1 || b > 4096 || (to_space && c % (b * b) != 0) || (!to_space && (h % b != 0 || w % b != 0))) {
    builder.fail("E1303") << "blocksize " << b << " does not divide the input " << shape_list(x.shape);
  }
  if (mode != "DCR" && mode != "CRD") builder.fail("E1303") << "mode \"" << printable(mode) << "\" is not DCR or CRD";
  auto known = [](std::vector<int64_t> values) {
    Shape shape;
    for (int64_t v : values) shape.push_back(Extent{v, {}});
    return shape;
  };
  Extent n = x.shape[0];
  Shape split, moved, result;
  std::vector<int64_t> perm;
  if (!to_space) {
    split = known({0, c, h / b, b, w / b, b}), perm = {0, 3, 5, 1, 2, 4};
    moved = known({0, b, b, c, h / b, w / b}), result = known({0, c * b * b, h / b, w / b});
  } else if (mode == "DCR") {
    split = known({0, b, b, c / (b * b), h, w}), perm = {0, 3, 4, 1, 5, 2};
    moved = known({0, c / (b * b), h, b, w, b}), result = known({0, c / (b * b), h * b, w * b});
  } else {
    split = known({0, c / (b * b), b, b, h, w}), perm = {0, 1, 4, 2, 5, 3};
    moved = known({0, c / (b * b), h, b, w, b}), result = known({0, c / (b * b), h * b, w * b});
  }
  split[0] = moved[0] = result[0] = n;
  Value blocks = reshaped(builder, x, split, "_blocks");
  Value turned = builder.emit("transpose(" + blocks.expr + ", " + int_list(perm) + ")", moved, x.kind, "_moved");
  builder.define(0, reshaped(builder, turned, result));
}

// Trilu with a constant k: x where the mask of the kept triangle holds, 0 elsewhere.
void translate_trilu(Builder& builder) {
  builder.accept_attributes({"upper"});
  const Value x = number_input(builder, 0, builder.input(0).kind == Kind::Z ? Kind::Z : Kind::R);
  if (x.shape.size() < 2) builder.fail("E1308") << "Trilu needs a matrix or a stack of them";
  int64_t k = 0;
  if (builder.has_input(1)) {
    const Constant& given = builder.constant_input(1, "k");
    if (given.element_count() != 1) builder.fail("E1303") << "k must be one integer";
    k = given.integers()[0];
  }
  bool upper = builder.int_attribute("upper", 1) != 0;
  int64_t rows = known_extent(builder, x.shape[x.shape.size() - 2], "the rows");
  int64_t columns = known_extent(builder, x.shape.back(), "the columns");
  Constant mask;
  mask.data_type = onnx::TensorProto::BOOL;
  mask.shape = {rows, columns};
  mask.onnx_name = builder.node->output(0) + "_triangle";
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < columns; ++j) mask.mutable_values().push_back(upper ? (j - i >= k) : (j - i <= k));
  }
  Value kept = builder.materialize(mask);
  define_elementwise(builder, "where(" + kept.expr + ", " + x.expr + (x.kind == Kind::Z ? ", 0)" : ", 0.0)"),
                     {&kept, &x}, x.kind);
}

// Hardmax (opset 13, one axis): 1 at the first maximum along the axis, 0 elsewhere. The
// maxima as 0/1, the count of maxima before each position by a contraction with a constant
// strictly lower triangle of 0/1 (a sum of at most n ones: exact), the first kept.
void translate_hardmax(Builder& builder) {
  builder.accept_attributes({"axis"});
  const Value& x = real_input(builder, 0);
  size_t rank = x.shape.size();
  int64_t axis = builder.normalize_axis(builder.int_attribute("axis", builder.opset >= 13 ? -1 : 1), rank, "axis");
  if ((builder.opset < 13 && axis != static_cast<int64_t>(rank) - 1) || rank > 20) {
    builder.fail("E1303") << "Hardmax before opset 13 is supported along the last axis only (rank up to 20)";
  }
  int64_t n = known_extent(builder, x.shape[axis], "the Hardmax axis");
  Constant before;
  before.data_type = onnx::TensorProto::FLOAT;
  before.shape = {n, n};
  before.onnx_name = builder.node->output(0) + "_earlier";
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < n; ++i) before.mutable_values().push_back(i < j ? 1.0 : 0.0);
  }
  Shape square = {x.shape[axis], x.shape[axis]};
  Value triangle = reshaped(builder, builder.materialize(before), square, "_triangle");
  std::string labels, out;
  for (size_t i = 0; i < rank; ++i) labels += static_cast<char>('a' + i);
  out = labels;
  labels[axis] = 'z';
  out[axis] = 'y';
  Shape kept = x.shape;
  kept[axis] = Extent{};
  Value top = builder.emit("max(" + x.expr + ", axis: [" + std::to_string(axis) + "])", kept, Kind::R, "_max");
  Value maxima = builder.emit("where(" + x.expr + " == " + top.expr + ", 1.0, 0.0)", x.shape, Kind::R, "_maxima");
  Value earlier = builder.emit("einsum(\"" + labels + ",yz->" + out + "\", " + maxima.expr + ", " + triangle.expr + ")",
                               x.shape, Kind::R, "_earlier");
  builder.define(0, builder.emit("where(" + earlier.expr + " < 0.5, " + maxima.expr + ", 0.0)", x.shape));
}

// CumSum along a constant axis (exclusive, reverse): x with an axis of 1 after `axis` (its
// position k), a BOOL parameter `takes[k, j]` (k ≤ j; exclusive k < j; reverse k ≥ j, k > j),
// then `sum(where(takes, x, 0.0), axis)`: each output the sum of its terms and zeros, exact.
void translate_cumsum(Builder& builder) {
  builder.accept_attributes({"exclusive", "reverse"});
  const Value& x = real_input(builder, 0);
  const Constant& axis_operand = builder.constant_input(1, "the axis");
  if (axis_operand.element_count() != 1) builder.fail("E1303") << "the axis must be one integer";
  size_t rank = x.shape.size();
  if (rank == 0) builder.fail("E1303") << "the operand is a scalar";
  auto axis = static_cast<size_t>(builder.normalize_axis(axis_operand.integers()[0], rank, "axis"));
  int64_t n = known_extent(builder, x.shape[axis], "the CumSum axis");
  const bool exclusive = builder.int_attribute("exclusive", 0) != 0, reverse = builder.int_attribute("reverse", 0) != 0;
  Constant takes;
  takes.data_type = onnx::TensorProto::BOOL;
  takes.shape = {n, n};
  for (size_t i = axis + 1; i < rank; ++i) takes.shape.push_back(1);
  takes.onnx_name = builder.node->output(0) + "_terms";
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < n; ++j) {
      bool take = reverse ? (exclusive ? k > j : k >= j) : (exclusive ? k < j : k <= j);
      takes.mutable_values().push_back(take ? 1.0 : 0.0);
    }
  }
  Value mask = builder.materialize(takes);
  Shape wide = x.shape;
  wide.insert(wide.begin() + static_cast<std::ptrdiff_t>(axis) + 1, Extent{});
  Value column = reshaped(builder, x, wide, "_column");
  Shape summed = x.shape;
  summed.insert(summed.begin() + static_cast<std::ptrdiff_t>(axis), Extent{});
  Value sums = builder.emit("sum(where(" + mask.expr + ", " + column.expr + ", 0.0), axis: [" + std::to_string(axis) + "])",
                            summed, Kind::R, "_sums");
  builder.define(0, reshaped(builder, sums, x.shape, "_shape"));
}

}  // namespace

void add_reduce_translators(std::map<std::string, Translator>& table) {
  table["ReduceSum"] = [](Builder& b) { translate_reduce(b, "sum(XA", true); };
  table["ReduceMean"] = [](Builder& b) { translate_reduce(b, "mean(XA", false); };
  table["ReduceMax"] = [](Builder& b) { translate_reduce(b, "max(XA", false); };
  table["ReduceMin"] = [](Builder& b) { translate_reduce(b, "-max(-XA", false); };
  table["ReduceL1"] = [](Builder& b) { translate_reduce(b, "sum(abs(X)A", false); };
  table["ReduceL2"] = [](Builder& b) { translate_reduce(b, "sqrt(sum(X * XA)", false); };
  table["ReduceSumSquare"] = [](Builder& b) { translate_reduce(b, "sum(X * XA", false); };
  table["ReduceLogSum"] = [](Builder& b) { translate_reduce(b, "log(sum(XA)", false); };
  table["ReduceLogSumExp"] = [](Builder& b) { translate_reduce(b, "logsumexp", false); };
  table["ReduceProd"] = [](Builder& b) { translate_reduce(b, "prod", false); };
  table["CumSum"] = translate_cumsum;
  table["Tile"] = translate_tile;
  table["Expand"] = translate_expand;
  table["DepthToSpace"] = [](Builder& b) { translate_depth_space(b, true); };
  table["SpaceToDepth"] = [](Builder& b) { translate_depth_space(b, false); };
  table["Trilu"] = translate_trilu;
  table["Hardmax"] = translate_hardmax;
}

}  // namespace presk::onnx_import
