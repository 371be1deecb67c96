// Translators of the CNN operators: Conv, MaxPool, AveragePool, GlobalAveragePool, Pad,
// GlobalMaxPool, BatchNormalization, InstanceNormalization, MeanVarianceNormalization and LRN. A windowed operator is
// im2col by layout alone: each spatial axis padded by `concat` (zeros, or for MaxPool copies
// of the edge element, which is inside every window that reads it), its kernel taps `slice`s
// joined by `concat`; then one `einsum` with the weight (Conv; a group axis when grouped) or
// one reduction over the tap axes (the pools). The exact meaning is the operator's.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "import/builder.h"
#include "ir/ir.h"

namespace presk::onnx_import {

constexpr size_t kConcatLimit = 64;  // operands of one presk concat

// concat of many parts along `axis` (nested when there are more than one concat takes).
Value concat_all(Builder& builder, std::vector<Value> parts, int64_t axis, const std::string& suffix) {
  while (parts.size() > 1) {
    std::vector<Value> joined;
    for (size_t begin = 0; begin < parts.size(); begin += kConcatLimit) {
      size_t end = std::min(parts.size(), begin + kConcatLimit);
      if (end - begin == 1) {
        joined.push_back(parts[begin]);
        continue;
      }
      Shape shape = parts[begin].shape;
      int64_t total = 0;
      std::string expr = "concat(";
      for (size_t i = begin; i < end; ++i) {
        total += parts[i].shape[axis].factor;
        expr += parts[i].expr + ", ";
      }
      shape[axis] = Extent{total, {}};
      joined.push_back(builder.emit(expr + "axis: " + std::to_string(axis) + ")", shape, parts[begin].kind, suffix));
    }
    parts = std::move(joined);
  }
  return parts[0];
}

namespace {

constexpr size_t kMaxSpatial = 3;
constexpr int64_t kMaxTaps = 4096;           // kernel taps along one axis
const char* const kKernelLabels = "pqr";     // einsum labels of the taps of each spatial axis
const char* const kOutputLabels = "xyz";     // and of its output positions

// One spatial axis of a windowed operator.
struct Window {
  int64_t extent = 0, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 0;
  // The last window reaches past the padding (ceil_mode): the positions beyond are no input.
  bool partial() const { return (out - 1) * stride + dilation * (kernel - 1) + 1 > extent + pad_begin + pad_end; }
};

std::string int_text(int64_t value) { return std::to_string(value); }

std::vector<int64_t> per_axis(Builder& builder, std::string_view name, size_t spatial, int64_t fallback) {
  std::vector<int64_t> values = builder.ints_attribute(name).value_or(std::vector<int64_t>(spatial, fallback));
  if (values.size() != spatial) {
    builder.fail("E1303") << name << " has " << values.size() << " entries for " << spatial << " spatial axes";
  }
  for (int64_t value : values) {
    if (value < 1 || value > kMaxTaps) builder.fail("E1303") << name << " " << value << " is outside 1 … " << kMaxTaps;
  }
  return values;
}

// The windows of the current node over the spatial axes of `x` (N, C, spatial…): kernel,
// strides, dilations, pads or auto_pad; ceil_mode (a last window may reach past the padding).
std::vector<Window> windows(Builder& builder, const Shape& x, const std::vector<int64_t>& kernel) {
  size_t spatial = x.size() - 2;
  std::vector<int64_t> strides = per_axis(builder, "strides", spatial, 1);
  std::vector<int64_t> dilations = per_axis(builder, "dilations", spatial, 1);
  std::vector<int64_t> pads = builder.ints_attribute("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  if (pads.size() != 2 * spatial) builder.fail("E1303") << "pads has " << pads.size() << " entries, not " << 2 * spatial;
  std::string auto_pad = builder.string_attribute("auto_pad", "NOTSET");
  bool ceil_mode = builder.int_attribute("ceil_mode", 0) != 0;
  std::vector<Window> result;
  for (size_t i = 0; i < spatial; ++i) {
    Window w{known_extent(builder, x[2 + i], "a spatial axis"), kernel[i], strides[i], dilations[i], pads[i], pads[spatial + i], 0};
    if (w.pad_begin < 0 || w.pad_end < 0 || w.pad_begin > kMaxTaps || w.pad_end > kMaxTaps) {
      builder.fail("E1303") << "pads must be in 0 … " << kMaxTaps;
    }
    int64_t span = w.dilation * (w.kernel - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out = (w.extent + w.stride - 1) / w.stride;
      int64_t total = std::max<int64_t>((w.out - 1) * w.stride + span - w.extent, 0);
      w.pad_begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end = total - w.pad_begin;
    } else if (auto_pad == "VALID") {
      w.pad_begin = w.pad_end = 0;
    } else if (auto_pad != "NOTSET") {
      builder.fail("E1303") << "auto_pad \"" << printable(auto_pad) << "\" is not supported (NOTSET, SAME_UPPER, SAME_LOWER, VALID)";
    }
    int64_t room = w.extent + w.pad_begin + w.pad_end - span;
    if (room < 0) builder.fail("E1308") << "the window (" << span << ") is wider than the padded axis " << i;
    if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
      w.out = (ceil_mode ? room + w.stride - 1 : room) / w.stride + 1;  // ceil_mode: a last, partial window
      if (ceil_mode && (w.out - 1) * w.stride >= w.extent + w.pad_begin) --w.out;  // that starts inside the input
    }
    result.push_back(w);
  }
  return result;
}

// `x[:, …, item]` with `item` on axis `axis`.
std::string item_at(const Value& x, size_t axis, const std::string& item) {
  std::string expr = x.expr + "[";
  for (size_t i = 0; i < axis; ++i) expr += ":, ";
  return expr + item + "]";
}

// A block of zeros of `shape`: a parameter; where an extent is symbolic (a batch), the parameter
// has extent 1 there and is stretched by `where(c, zeros, zeros)` with c a comparison on a
// slice of x that has the symbolic extents (either branch is the same zero: exact).
Value zero_block(Builder& builder, const Value& x, const Shape& shape) {
  Constant zeros;
  zeros.data_type = onnx::TensorProto::FLOAT;
  std::string corner;
  Shape corner_shape;
  bool symbolic = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool known = shape[i].is_known();
    symbolic = symbolic || !known;
    zeros.shape.push_back(known ? shape[i].factor : 1);
    corner += std::string(i == 0 ? "" : ", ") + (known ? "0 : 1" : ":");
    corner_shape.push_back(known ? Extent{1, {}} : x.shape[i]);
  }
  constexpr int64_t kBlockLimit = int64_t{1} << 24;  // the zeros are a parameter of the program
  int64_t count_all = 1;
  for (int64_t e : zeros.shape) {
    if (e > kBlockLimit / std::max<int64_t>(count_all, 1)) {
      builder.fail("E1303") << "the padding block " << shape_list(shape) << " is larger than the 2^24 elements the import "
                            << "writes as a parameter";
    }
    count_all *= e;
  }
  zeros.mutable_values().assign(static_cast<size_t>(count_all), 0.0);
  zeros.onnx_name = builder.node->output(0) + "_pad";
  Value made = builder.materialize(zeros);
  if (!symbolic) return made.shape == shape ? made : reshaped(builder, made, shape, "_pad");
  Value stretch = builder.emit(x.expr + "[" + corner + "] == 0.0", corner_shape, Kind::B, "_batch");
  return builder.emit("where(" + stretch.expr + ", " + made.expr + ", " + made.expr + ")", shape, Kind::R, "_pad");
}

// x padded along `axis` by `before`/`after` positions: zeros (or `fill`, a scalar, where given),
// or copies of the edge element.
Value padded(Builder& builder, const Value& x, size_t axis, int64_t before, int64_t after, bool edge,
             const Value* fill = nullptr) {
  if (before == 0 && after == 0) return x;
  int64_t extent = x.shape[axis].factor;
  std::vector<Value> parts;
  auto block = [&](int64_t count, bool at_end) {
    if (count == 0) return;
    Shape shape = x.shape;
    shape[axis] = Extent{count, {}};
    if (edge) {
      int64_t position = at_end ? extent - 1 : 0;
      Shape one = x.shape;
      one[axis] = Extent{};
      Value copy = builder.emit(item_at(x, axis, int_text(position) + " : " + int_text(position + 1)), one, x.kind, "_edge");
      parts.insert(parts.end(), static_cast<size_t>(count), copy);
      return;
    }
    Value zeros = zero_block(builder, x, shape);
    if (fill == nullptr) return parts.push_back(zeros);
    parts.push_back(builder.emit("where(" + zeros.expr + " == 0.0, " + operand(*fill) + ", " + operand(*fill) + ")", shape,
                                 Kind::R, "_fill"));  // exactly the value, -0 and NaN too
  };
  block(before, false);
  parts.push_back(x);
  block(after, true);
  return concat_all(builder, parts, static_cast<int64_t>(axis), "_padded");
}

// The taps of one window along `axis` of x: the result has the axis replaced by
// [kernel, out] (tap k, output position j reads padded position k·dilation + j·stride).
Value taps(Builder& builder, const Value& x, size_t axis, const Window& w, bool edge) {
  int64_t s = w.stride;
  int64_t reach = ((w.kernel - 1) * w.dilation / s + w.out) * s;  // positions the taps read, rounded to s
  int64_t extent = w.extent + w.pad_begin + w.pad_end;
  int64_t extra = std::max<int64_t>(reach - extent, 0);
  extra += (s - (extent + extra) % s) % s;
  Value xp = padded(builder, x, axis, w.pad_begin, w.pad_end + extra, edge);
  int64_t total = extent + extra;
  Value rows = xp;
  if (s > 1) {  // [..., total, ...] → [..., total / s, s, ...]: tap k starts at row k·d / s, column k·d % s
    Shape split = xp.shape;
    split[axis] = Extent{total / s, {}};
    split.insert(split.begin() + axis + 1, Extent{s, {}});
    rows = reshaped(builder, xp, split, "_strided");
  }
  std::vector<Value> parts;
  Shape tap_shape = x.shape;
  tap_shape[axis] = Extent{w.out, {}};
  for (int64_t k = 0; k < w.kernel; ++k) {
    int64_t start = k * w.dilation;
    std::string item = int_text(start / s) + " : " + int_text(start / s + w.out);
    if (s > 1) item += ", " + int_text(start % s);
    parts.push_back(builder.emit(item_at(rows, axis, item), tap_shape, Kind::R, "_tap"));  // a column drops its axis
  }
  Value joined = concat_all(builder, parts, static_cast<int64_t>(axis), "_taps");
  Shape shape = x.shape;
  shape[axis] = Extent{w.out, {}};
  shape.insert(shape.begin() + axis, Extent{w.kernel, {}});
  return reshaped(builder, joined, shape, "_taps");
}

// x (N, C, spatial…) as patches (N, C, K1, O1, K2, O2, …).
Value patches(Builder& builder, const Value& x, const std::vector<Window>& ws, bool edge) {
  Value result = x;
  for (size_t i = 0; i < ws.size(); ++i) result = taps(builder, result, 2 + 2 * i, ws[i], edge);
  return result;
}

size_t spatial_rank(Builder& builder, const Value& x) {
  if (x.shape.size() < 3 || x.shape.size() > 2 + kMaxSpatial) {
    builder.fail("E1323") << "the input has rank " << x.shape.size() << "; presk imports 1 to " << kMaxSpatial
                          << " spatial axes (N, C, spatial…)";
  }
  return x.shape.size() - 2;
}

Shape output_shape(const Value& x, const Extent& channels, const std::vector<Window>& ws) {
  Shape shape = {x.shape[0], channels};
  for (const Window& w : ws) shape.push_back(Extent{w.out, {}});
  return shape;
}

// A per-channel operand (C values) shaped [C, 1, …] to broadcast over (N, C, spatial…).
Value channel_operand(Builder& builder, int index, const Extent& channels, size_t spatial) {
  Shape shape = {channels};
  shape.insert(shape.end(), spatial, Extent{});
  const Value& raw = builder.raw_input(index);
  if (raw.constant && raw.expr.empty() && raw.constant->is_float()) {
    if (raw.constant->element_count() != static_cast<size_t>(channels.factor) || !channels.is_known()) {
      builder.fail("E1308") << "operand " << index << " has " << raw.constant->element_count() << " values for "
                            << extent_text(channels) << " channels";
    }
    Constant copy = *raw.constant;
    copy.shape.clear();
    for (const Extent& e : shape) copy.shape.push_back(e.factor);
    return builder.materialize(copy);
  }
  Value value = tensor_input(builder, index);
  if (value.kind != Kind::R) builder.fail("E1304") << "operand " << index << " must be a float tensor";
  if (!(product(value.shape, 0, value.shape.size()) == channels)) {
    builder.fail("E1308") << "operand " << index << " of shape " << shape_list(value.shape) << " is not one value per channel";
  }
  return reshaped(builder, value, shape, "_channels");
}

std::string labels(size_t spatial, bool kernel, bool out) {
  std::string text;
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel) text += kKernelLabels[i];
    if (out) text += kOutputLabels[i];
  }
  return text;
}

// The convolution of x (N, C, spatial…) with weight (M, C/group, kernel…) over the windows:
// the expression of the result, of shape (N, M, out…).
std::string convolution(Builder& builder, const Value& x, const Value& weight, const std::vector<Window>& ws,
                        int64_t group, const Shape& shape) {
  size_t spatial = ws.size();
  int64_t channels = x.shape[1].factor, maps = shape[1].factor;
  Value cols = patches(builder, x, ws, false);
  std::string k = labels(spatial, true, false), o = labels(spatial, false, true), ko = labels(spatial, true, true);
  if (group == 1) return "einsum(\"nc" + ko + ",mc" + k + "->nm" + o + "\", " + cols.expr + ", " + weight.expr + ")";
  Shape grouped = cols.shape;
  grouped[1] = Extent{channels / group, {}};
  grouped.insert(grouped.begin() + 1, Extent{group, {}});
  Value g_cols = reshaped(builder, cols, grouped, "_groups");
  Shape w_shape = weight.shape;
  w_shape[0] = Extent{maps / group, {}};
  w_shape.insert(w_shape.begin(), Extent{group, {}});
  Value g_weight = reshaped(builder, weight, w_shape, "_weight_groups");
  Shape g_out = shape;
  g_out[1] = Extent{maps / group, {}};
  g_out.insert(g_out.begin() + 1, Extent{group, {}});
  Value mixed = builder.emit("einsum(\"ngc" + ko + ",gmc" + k + "->ngm" + o + "\", " + g_cols.expr + ", " +
                                 g_weight.expr + ")", g_out, Kind::R, "_grouped");
  return "reshape(" + mixed.expr + ", " + shape_list(shape) + ")";
}

// Output 0 is `expr` (N, M, out…) plus the optional bias operand 2.
void define_with_bias(Builder& builder, std::string expr, const Shape& shape) {
  if (builder.has_input(2)) {
    Value bias = channel_operand(builder, 2, shape[1], shape.size() - 2);
    Value product_value = builder.emit(expr, shape, Kind::R, "_product");
    expr = product_value.expr + " + " + operand(bias);
  }
  builder.define(0, builder.emit(expr, shape));
}

int64_t checked_group(Builder& builder, int64_t channels, int64_t maps) {
  int64_t group = builder.int_attribute("group", 1);
  if (group < 1 || channels % group != 0 || maps % group != 0) {
    builder.fail("E1308") << "group " << group << " does not divide " << channels << " input and " << maps << " output channels";
  }
  return group;
}

void translate_conv(Builder& builder) {
  builder.accept_attributes({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  const Value& x = real_input(builder, 0);
  size_t spatial = spatial_rank(builder, x);
  Value weight = tensor_input(builder, 1);
  if (weight.kind != Kind::R || weight.shape.size() != spatial + 2) {
    builder.fail("E1308") << "the weight " << shape_list(weight.shape) << " is not (M, C/group, kernel…) of rank " << spatial + 2;
  }
  std::vector<int64_t> kernel;
  for (size_t i = 0; i < spatial; ++i) kernel.push_back(known_extent(builder, weight.shape[2 + i], "the kernel"));
  if (auto given = builder.ints_attribute("kernel_shape"); given && *given != kernel) {
    builder.fail("E1308") << "kernel_shape differs from the weight's shape " << shape_list(weight.shape);
  }
  int64_t channels = known_extent(builder, x.shape[1], "the channel axis");
  int64_t maps = known_extent(builder, weight.shape[0], "the weight's output channels");
  int64_t group = checked_group(builder, channels, maps);
  if (!(weight.shape[1] == Extent{channels / group, {}})) {
    builder.fail("E1308") << "the weight " << shape_list(weight.shape) << " does not have " << channels / group << " input channels per group";
  }
  std::vector<Window> ws = windows(builder, x.shape, kernel);
  Shape shape = output_shape(x, Extent{maps, {}}, ws);
  define_with_bias(builder, convolution(builder, x, weight, ws, group, shape), shape);
}

// x with s − 1 zeros after each element along `axis` but the last: [.., H, ..] → [.., s(H − 1) + 1, ..].
Value spread(Builder& builder, const Value& x, size_t axis, int64_t s) {
  if (s == 1) return x;
  int64_t extent = x.shape[axis].factor;
  Shape column = x.shape;
  column.insert(column.begin() + axis + 1, Extent{});
  Value one = reshaped(builder, x, column, "_column");
  Value gaps = padded(builder, one, axis + 1, 0, s - 1, false);
  Shape flat = x.shape;
  flat[axis] = Extent{extent * s, {}};
  Value joined = reshaped(builder, gaps, flat, "_spread");
  Shape shape = x.shape;
  shape[axis] = Extent{s * (extent - 1) + 1, {}};
  return builder.emit(item_at(joined, axis, "0 : " + int_text(s * (extent - 1) + 1)), shape, Kind::R, "_spread");
}

// ConvTranspose as the convolution it transposes: the input spread by the strides (zeros
// between its elements), padded by span − 1 − pads (+ output_padding at the end), and
// convolved at stride 1 with the kernel flipped and its channel axes swapped (a constant
// weight, rearranged at import: no arithmetic).
void translate_conv_transpose(Builder& builder) {
  builder.accept_attributes({"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "pads", "strides"});
  const Value& x = real_input(builder, 0);
  size_t spatial = spatial_rank(builder, x);
  const Constant& w = builder.constant_input(1, "the weight");
  int64_t channels = known_extent(builder, x.shape[1], "the channel axis");
  if (w.shape.size() != spatial + 2 || w.shape[0] != channels) {
    builder.fail("E1308") << "the weight is not (C, M/group, kernel…) for " << channels << " input channels";
  }
  int64_t group = checked_group(builder, channels, w.shape[1] * builder.int_attribute("group", 1));
  int64_t per_group = w.shape[1], maps = per_group * group, in_group = channels / group;
  std::string auto_pad = builder.string_attribute("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    builder.fail("E1323").hint("give explicit pads") << "auto_pad \"" << printable(auto_pad) << "\" is not supported for ConvTranspose";
  }
  std::vector<int64_t> strides = per_axis(builder, "strides", spatial, 1);
  std::vector<int64_t> dilations = per_axis(builder, "dilations", spatial, 1);
  std::vector<int64_t> pads = builder.ints_attribute("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  std::vector<int64_t> extra = builder.ints_attribute("output_padding").value_or(std::vector<int64_t>(spatial, 0));
  if (auto_pad == "VALID") pads.assign(2 * spatial, 0);
  if (pads.size() != 2 * spatial || extra.size() != spatial) {
    builder.fail("E1303") << "pads needs two entries and output_padding one per spatial axis";
  }
  Value spread_x = x;
  std::vector<Window> ws;
  int64_t taps_total = 1;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t extent = known_extent(builder, x.shape[2 + i], "a spatial axis");
    spread_x = spread(builder, spread_x, 2 + i, strides[i]);
    int64_t kernel = w.shape[2 + i], span = dilations[i] * (kernel - 1) + 1;
    Window window{strides[i] * (extent - 1) + 1, kernel, 1, dilations[i], span - 1 - pads[i], span - 1 - pads[spatial + i] + extra[i], 0};
    if (window.pad_begin < 0 || window.pad_end < 0 || extra[i] < 0 || extra[i] >= std::max(strides[i], dilations[i])) {
      builder.fail("E1323") << "pads wider than the kernel's span, or an output_padding outside [0, stride), are not supported";
    }
    window.out = window.extent + window.pad_begin + window.pad_end - span + 1;
    ws.push_back(window);
    taps_total *= kernel;
  }
  Constant flipped;  // [M, C/group, kernel…]: flipped[g·M/g + m, c, k] = w[g·C/g + c, m, K − 1 − k]
  flipped.data_type = w.data_type;
  flipped.onnx_name = builder.node->input(1) + "_flipped";
  flipped.shape = {maps, in_group};
  flipped.shape.insert(flipped.shape.end(), w.shape.begin() + 2, w.shape.end());
  std::vector<double>& out = flipped.mutable_values();
  const std::vector<double>& in = w.values();
  out.resize(in.size());
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t m = 0; m < per_group; ++m) {
      for (int64_t c = 0; c < in_group; ++c) {
        for (int64_t k = 0; k < taps_total; ++k) {
          out[(((g * per_group + m) * in_group + c) * taps_total) + k] =
              in[(((g * in_group + c) * per_group + m) * taps_total) + taps_total - 1 - k];
        }
      }
    }
  }
  Shape weight_shape;
  for (int64_t extent : flipped.shape) weight_shape.push_back(Extent{extent, {}});
  Value weight = reshaped(builder, builder.materialize(flipped), weight_shape, "_weight");  // a literal when 1 value
  Shape shape = output_shape(x, Extent{maps, {}}, ws);
  define_with_bias(builder, convolution(builder, spread_x, weight, ws, group, shape), shape);
}

void translate_pool(Builder& builder, bool max) {
  if (max) {
    builder.accept_attributes({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
    if (builder.node->output_size() > 1 && !builder.node->output(1).empty()) {
      builder.fail("E1323") << "MaxPool's Indices output is not supported";
    }
  } else {
    builder.accept_attributes({"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"});
  }
  const Value& x = real_input(builder, 0);
  size_t spatial = spatial_rank(builder, x);
  std::optional<std::vector<int64_t>> kernel = builder.ints_attribute("kernel_shape");
  if (!kernel || kernel->size() != spatial) builder.fail("E1303") << "kernel_shape must give one extent per spatial axis";
  for (int64_t k : *kernel) {
    if (k < 1 || k > kMaxTaps) builder.fail("E1303") << "kernel extent " << k << " is outside 1 … " << kMaxTaps;
  }
  std::vector<Window> ws = windows(builder, x.shape, *kernel);
  bool any_pad = false, any_partial = false;
  for (const Window& w : ws) {
    any_pad = any_pad || w.pad_begin > 0 || w.pad_end > 0;
    any_partial = any_partial || w.partial();
    if (max && (w.pad_begin > 0 || w.pad_end > 0 || w.partial()) &&
        (w.dilation != 1 || std::max(w.pad_begin, w.pad_end) >= w.kernel)) {
      builder.fail("E1323") << "MaxPool pads or ceil_mode windows with dilations, or pads as wide as the kernel, are not supported";
    }
  }
  Value cols = patches(builder, x, ws, max);
  Shape shape = output_shape(x, x.shape[1], ws);
  std::string axes;
  for (size_t i = 0; i < spatial; ++i) axes += (i == 0 ? "" : ", ") + int_text(2 + 2 * static_cast<int64_t>(i));
  bool include_pad = builder.int_attribute("count_include_pad", 0) != 0;
  std::string function = max ? "max" : !any_partial && (!any_pad || include_pad) ? "mean" : "sum";
  Shape kept = cols.shape;
  for (size_t i = 0; i < spatial; ++i) kept[2 + 2 * i] = Extent{};
  Value reduced = builder.emit(function + "(" + cols.expr + ", axis: [" + axes + "])", kept, Kind::R, "_window");
  if (function != "sum") return builder.define(0, reshaped(builder, reduced, shape));
  // AveragePool without the padding in the count, or with a partial window (ceil_mode): each
  // output over the inputs (and with count_include_pad the pads) its window covers.
  Constant counts;
  counts.data_type = onnx::TensorProto::FLOAT;
  counts.mutable_values() = {1.0};
  for (const Window& w : ws) {
    std::vector<double> next;
    for (double value : counts.values()) {
      for (int64_t j = 0; j < w.out; ++j) {
        int64_t covered = 0;
        for (int64_t t = 0; t < w.kernel; ++t) {
          int64_t position = j * w.stride + t * w.dilation - w.pad_begin;
          covered += include_pad ? position >= -w.pad_begin && position < w.extent + w.pad_end
                                 : position >= 0 && position < w.extent;
        }
        next.push_back(value * static_cast<double>(std::max<int64_t>(covered, 1)));
      }
    }
    counts.mutable_values() = std::move(next);
    counts.shape.push_back(w.out);
  }
  counts.onnx_name = builder.node->output(0) + "_counts";
  Value divisor = builder.materialize(counts);
  Value sums = reshaped(builder, reduced, shape, "_sums");
  builder.define(0, builder.emit(sums.expr + " / " + operand(divisor), shape));
}

void translate_global_pool(Builder& builder, const std::string& function) {
  builder.accept_attributes({});
  const Value& x = real_input(builder, 0);
  size_t spatial = spatial_rank(builder, x);
  std::string axes;
  Shape shape = x.shape;
  for (size_t i = 0; i < spatial; ++i) {
    axes += (i == 0 ? "" : ", ") + int_text(2 + static_cast<int64_t>(i));
    shape[2 + i] = Extent{};
  }
  builder.define(0, builder.emit(function + "(" + x.expr + ", axis: [" + axes + "])", shape));
}

// Inference form, from the running statistics: (x − mean) · scale / √(var + ε) + B.
void translate_batch_norm(Builder& builder) {
  builder.accept_attributes({"epsilon", "momentum", "spatial", "training_mode"});
  if (builder.int_attribute("training_mode", 0) != 0 || builder.int_attribute("spatial", 1) != 1) {
    builder.fail("E1323") << "training_mode=1 and spatial=0 are not supported (presk imports the inference form)";
  }
  for (int i = 1; i < builder.node->output_size(); ++i) {
    if (!builder.node->output(i).empty()) builder.fail("E1323") << "the running-statistics outputs are not supported";
  }
  const Value& x = real_input(builder, 0);
  if (x.shape.size() < 2) builder.fail("E1308") << "the input needs a channel axis (N, C, …)";
  size_t spatial = x.shape.size() - 2;
  std::vector<Value> ops;
  for (int index = 1; index <= 4; ++index) ops.push_back(channel_operand(builder, index, x.shape[1], spatial));
  std::string epsilon = ir::real_to_string(builder.float_attribute("epsilon", 1e-5f));
  const Value& scale = ops[0];
  const Value& bias = ops[1];
  const Value& mean = ops[2];
  const Value& var = ops[3];
  builder.define(0, builder.emit("(" + x.expr + " - " + operand(mean) + ") * " + operand(scale) + " / sqrt(" +
                                     operand(var) + " + " + epsilon + ") + " + operand(bias), x.shape));
}

// (x − mean) / √(var + ε) · scale + B, the statistics over the spatial axes of each (n, c).
void translate_instance_norm(Builder& builder) {
  builder.accept_attributes({"epsilon"});
  const Value& x = real_input(builder, 0);
  size_t spatial = spatial_rank(builder, x);
  Value scale = channel_operand(builder, 1, x.shape[1], spatial);
  Value bias = channel_operand(builder, 2, x.shape[1], spatial);
  std::string axes;
  Shape kept = x.shape;
  for (size_t i = 0; i < spatial; ++i) {
    axes += (i == 0 ? "" : ", ") + int_text(2 + static_cast<int64_t>(i));
    kept[2 + i] = Extent{};
  }
  std::string over = ", axis: [" + axes + "])";
  std::string epsilon = ir::real_to_string(builder.float_attribute("epsilon", 1e-5f));
  Value mean = builder.emit("mean(" + x.expr + over, kept, Kind::R, "_mean");
  Value centered = builder.emit(x.expr + " - " + mean.expr, x.shape, Kind::R, "_centered");
  Value variance = builder.emit("mean(" + centered.expr + " * " + centered.expr + over, kept, Kind::R, "_variance");
  builder.define(0, builder.emit(centered.expr + " * rsqrt(" + variance.expr + " + " + epsilon + ") * " +
                                     operand(scale) + " + " + operand(bias), x.shape));
}

// MeanVarianceNormalization: (x − E x) / (√(E x² − (E x)²) + 10⁻⁹) over `axes` (ONNX's function
// body; its variance is E (x − E x)², written so), the ε the binary32 10⁻⁹ of that body.
void translate_mvn(Builder& builder) {
  builder.accept_attributes({"axes"});
  const Value& x = real_input(builder, 0);
  std::vector<int64_t> axes = builder.ints_attribute("axes").value_or(std::vector<int64_t>{0, 2, 3});
  Shape kept = x.shape;
  std::string list;
  for (int64_t& axis : axes) {
    axis = builder.normalize_axis(axis, x.shape.size(), "axis");
    kept[static_cast<size_t>(axis)] = Extent{};
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  for (int64_t axis : axes) list += (list.empty() ? "" : ", ") + int_text(axis);
  std::string over = ", axis: [" + list + "])";
  Value mean = builder.emit("mean(" + x.expr + over, kept, Kind::R, "_mean");
  Value centered = builder.emit(x.expr + " - " + mean.expr, x.shape, Kind::R, "_centered");
  Value variance = builder.emit("mean(" + centered.expr + " * " + centered.expr + over, kept, Kind::R, "_variance");
  builder.define(0, builder.emit(centered.expr + " / (sqrt(" + variance.expr + ") + " + ir::real_to_string(double{1e-9f}) + ")",
                                 x.shape));
}

// LRN: x / (bias + α/size · Σ x²)^β, the sum over the channels c − ⌊(size−1)/2⌋ … c + ⌈(size−1)/2⌉
// that exist (the squares padded with zeros on the channel axis, `size` slices added); the
// power of the positive base as exp(β · ln b), its exact value.
void translate_lrn(Builder& builder) {
  builder.accept_attributes({"alpha", "beta", "bias", "size"});
  const Value& x = real_input(builder, 0);
  spatial_rank(builder, x);
  const int64_t size = builder.int_attribute("size", 0);
  if (size < 1 || size > kMaxTaps) builder.fail("E1303") << "size " << size << " is outside 1 … " << kMaxTaps;
  const int64_t channels = known_extent(builder, x.shape[1], "the channel axis");
  Value squares = builder.emit(operand(x) + " * " + operand(x), x.shape, Kind::R, "_squares");
  Value wide = padded(builder, squares, 1, (size - 1) / 2, size / 2, false);
  std::string sum;
  for (int64_t k = 0; k < size; ++k) sum += (k == 0 ? "" : " + ") + item_at(wide, 1, int_text(k) + " : " + int_text(k + channels));
  Value window = builder.emit(sum, x.shape, Kind::R, "_window");
  const double alpha = builder.float_attribute("alpha", 1e-4f), beta = builder.float_attribute("beta", 0.75f);
  const double bias = builder.float_attribute("bias", 1.0f);
  Value base = builder.emit(ir::real_to_string(bias) + " + " + window.expr + " * " + ir::real_to_string(alpha) + " / " +
                                int_text(size), x.shape, Kind::R, "_base");
  builder.define(0, builder.emit(operand(x) + " / exp(" + ir::real_to_string(beta) + " * log(" + base.expr + "))", x.shape));
}

}  // namespace

// x padded along `axis` by reflection: x[before], …, x[1] first, x[n−2], …, x[n−1−after] last.
Value reflected(Builder& builder, const Value& x, size_t axis, int64_t before, int64_t after) {
  int64_t extent = known_extent(builder, x.shape[axis], "a padded axis");
  if (before >= extent || after >= extent) {
    builder.fail("E1303") << "reflect pads of " << std::max(before, after) << " on an axis of " << extent
                          << " reach past the edge (at most " << extent - 1 << ")";
  }
  Shape one = x.shape;
  one[axis] = Extent{};
  auto item = [&](int64_t k) {
    return builder.emit(item_at(x, axis, int_text(k) + " : " + int_text(k + 1)), one, x.kind, "_reflect");
  };
  std::vector<Value> parts;
  for (int64_t k = before; k >= 1; --k) parts.push_back(item(k));
  parts.push_back(x);
  for (int64_t k = 1; k <= after; ++k) parts.push_back(item(extent - 1 - k));
  return concat_all(builder, parts, static_cast<int64_t>(axis), "_padded");
}

// Pad, modes constant (a value: an attribute before opset 11, a scalar operand from 11, which
// may be computed at run time), edge and reflect; pads an attribute before 11, an operand from 11
// (known at import), none negative.
void translate_pad(Builder& builder) {
  std::vector<int64_t> pads;
  std::optional<Value> fill;
  if (builder.opset < 11) {
    builder.accept_attributes({"mode", "pads", "value"});
    auto given = builder.ints_attribute("pads");
    if (!given) builder.fail("E1303") << "Pad needs the pads attribute";
    pads = *given;
    float value = builder.float_attribute("value", 0.0f);
    if (value != 0.0f || std::signbit(value)) fill = Value{"(" + ir::real_to_string(value) + ")", {}, Kind::R, nullptr};
  } else {
    builder.accept_attributes({"mode"});
    pads = builder.constant_input(1, "the pads").integers();
    if (builder.has_input(2)) fill = real_input(builder, 2);
  }
  const std::string mode = builder.string_attribute("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") {
    builder.fail("E1303") << "mode=\"" << printable(mode) << "\" is not supported (supported: constant, edge, reflect)";
  }
  // edge and reflect move elements: integers too
  Value x = number_input(builder, 0, mode != "constant" && builder.input(0).kind == Kind::Z ? Kind::Z : Kind::R);
  const size_t rank = x.shape.size();
  if (pads.size() != 2 * rank) builder.fail("E1303") << "the pads have " << pads.size() << " values for rank " << rank;
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) {
    builder.fail("E1303") << "negative pads (cropping) are not supported";
  }
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p > (int64_t{1} << 16); })) {
    builder.fail("E1303") << "a pad beyond 2^16 positions is not supported";
  }
  for (size_t axis = 0; axis < rank; ++axis) {
    int64_t before = pads[axis], after = pads[axis + rank];
    if (before == 0 && after == 0) continue;
    known_extent(builder, x.shape[axis], "a padded axis");
    x = mode == "reflect" ? reflected(builder, x, axis, before, after)
                          : padded(builder, x, axis, before, after, mode == "edge", fill ? &*fill : nullptr);
  }
  builder.define(0, x);
}

void add_conv_translators(std::map<std::string, Translator>& table) {
  table["Pad"] = translate_pad;
  table["Conv"] = translate_conv;
  table["ConvTranspose"] = translate_conv_transpose;
  table["MaxPool"] = [](Builder& b) { translate_pool(b, true); };
  table["AveragePool"] = [](Builder& b) { translate_pool(b, false); };
  table["GlobalAveragePool"] = [](Builder& b) { translate_global_pool(b, "mean"); };
  table["GlobalMaxPool"] = [](Builder& b) { translate_global_pool(b, "max"); };
  table["BatchNormalization"] = translate_batch_norm;
  table["InstanceNormalization"] = translate_instance_norm;
  table["MeanVarianceNormalization"] = translate_mvn;
  table["LRN"] = translate_lrn;
}

}  // namespace presk::onnx_import
