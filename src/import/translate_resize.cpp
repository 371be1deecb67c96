// Resize (opsets 10–17, and Upsample): each resized axis is a linear map of the input along it,
// out[i] = Σ_k W[i, k]·x[k], with W computed at import by ONNX's reference algorithm (the
// coordinate transformation, the neighbours clamped to the edge, the nearest, linear or cubic
// coefficients, exclude_outside). Nearest selects: `sum(where(W[i, k] ≠ 0, x, 0.0))`, exact for
// every input; linear and cubic contract with W as a parameter (docs/import.md).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "import/builder.h"

namespace presk::onnx_import {
namespace {

struct ResizeMode {
  std::string mode, transform, nearest;
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

// The source coordinate of output position x (ONNX's coordinate_transformation_mode).
double source_coordinate(const Builder& builder, const ResizeMode& m, double x, double scale, int64_t in, int64_t out) {
  const std::string& t = m.transform;
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (t == "align_corners") return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (t == "asymmetric") return x / scale;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  builder.fail("E1303") << "coordinate_transformation_mode=\"" << printable(t)
                        << "\" is not supported (supported: half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
                           "tf_half_pixel_for_nn)";
  return 0;
}

std::vector<double> coefficients(const ResizeMode& m, double ratio, bool integral) {
  if (m.mode == "nearest") {
    if (integral) return {0, 1};
    if (m.nearest == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (m.nearest == "floor") return {1, 0};
    if (m.nearest == "ceil") return {0, 1};
    return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};  // round_prefer_floor
  }
  if (m.mode == "linear") return {1 - ratio, ratio};
  const double a = m.cubic_a, r = ratio, s = 1 - ratio;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * s - (a + 3)) * s * s + 1, ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

// W[i, k] for one axis: the n neighbours of the source coordinate nearest to it (ties to the
// smaller index), each clamped to [0, in) as the edge padding does.
std::vector<double> weights(const Builder& builder, const ResizeMode& m, double scale, int64_t in, int64_t out) {
  std::vector<double> w(static_cast<size_t>(out * in), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const double x = source_coordinate(builder, m, static_cast<double>(i), scale, in, out);
    const double floor_x = std::floor(x);
    const bool integral = x == floor_x;
    std::vector<double> c = coefficients(m, integral ? 1.0 : x - floor_x, integral);
    const auto n = static_cast<int64_t>(c.size());
    // the n nearest integers to x, ties to the smaller: for a fraction, floor − n/2 + 1 …;
    // for an integer x (ratio 1), x − n/2 … x + n/2 − 1
    const int64_t first = static_cast<int64_t>(floor_x) - n / 2 + (integral ? 0 : 1);
    double kept = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t source = first + j;
      if (m.exclude_outside && (source < 0 || source >= in)) c[static_cast<size_t>(j)] = 0;
      kept += c[static_cast<size_t>(j)];
    }
    for (int64_t j = 0; j < n; ++j) {
      const int64_t source = std::clamp<int64_t>(first + j, 0, in - 1);
      double coefficient = c[static_cast<size_t>(j)];
      if (m.exclude_outside) coefficient /= kept;
      w[static_cast<size_t>(i * in + source)] += coefficient;
    }
  }
  return w;
}

// x resized along `axis` from `in` to `out` positions by W.
Value resize_axis(Builder& builder, const Value& x, size_t axis, const ResizeMode& m, double scale, int64_t out) {
  const int64_t in = x.shape[axis].factor;
  Constant w;
  w.shape = {out, in};
  w.mutable_values() = weights(builder, m, scale, in, out);
  w.onnx_name = builder.node->output(0) + "_axis" + std::to_string(axis);
  Shape shape = x.shape;
  shape[axis] = Extent{out, {}};
  const std::string suffix = "_axis" + std::to_string(axis);
  if (m.mode == "nearest") {  // a selection: where over [.., out, in, ..], summed over the input axis
    w.data_type = onnx::TensorProto::BOOL;
    for (size_t i = axis + 1; i < x.shape.size(); ++i) w.shape.push_back(1);
    Value select = builder.materialize(w);
    Shape wide = x.shape;
    wide.insert(wide.begin() + static_cast<std::ptrdiff_t>(axis), Extent{});
    Value column = reshaped(builder, x, wide, suffix + "_wide");
    Shape summed = shape;
    summed.insert(summed.begin() + static_cast<std::ptrdiff_t>(axis) + 1, Extent{});
    Value picked = builder.emit("sum(where(" + select.expr + ", " + column.expr + ", 0.0), axis: [" +
                                    std::to_string(axis + 1) + "])", summed, Kind::R, suffix);
    return reshaped(builder, picked, shape, suffix + "_shape");
  }
  w.data_type = onnx::TensorProto::DOUBLE;
  Value matrix = builder.materialize(w);
  std::string labels, result;
  for (size_t i = 0; i < x.shape.size(); ++i) labels += static_cast<char>('a' + i);
  result = labels;
  labels[axis] = 'z';
  result[axis] = 'y';
  return builder.emit("einsum(\"" + labels + ",yz->" + result + "\", " + x.expr + ", " + matrix.expr + ")", shape,
                      Kind::R, suffix);
}

void translate_resize(Builder& builder, bool upsample) {
  builder.accept_attributes({"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                             "exclude_outside", "extrapolation_value", "antialias", "keep_aspect_ratio_policy"});
  ResizeMode m{builder.string_attribute("mode", "nearest"),
               builder.string_attribute("coordinate_transformation_mode", upsample || builder.opset < 11 ? "asymmetric" : "half_pixel"),
               builder.string_attribute("nearest_mode", upsample || builder.opset < 11 ? "floor" : "round_prefer_floor"),
               builder.float_attribute("cubic_coeff_a", -0.75f), builder.int_attribute("exclude_outside", 0) != 0};
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic") {
    builder.fail("E1303") << "mode=\"" << printable(m.mode) << "\" is not supported (supported: nearest, linear, cubic)";
  }
  const Value x = tensor_input(builder, 0);
  if (x.kind != Kind::R) builder.fail("E1304") << "operand 0 must be a float tensor";
  const size_t rank = x.shape.size();
  const int scales_index = upsample || builder.opset < 11 ? 1 : 2;
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (builder.has_input(scales_index) && builder.constant_input(scales_index, "the scales").element_count() != 0) {
    scales = builder.constant_input(scales_index, "the scales").values();
  } else if (!upsample && builder.has_input(3)) {
    sizes = builder.constant_input(3, "the sizes").integers();
  } else if (upsample && builder.attribute("scales") != nullptr) {
    const onnx::AttributeProto* attribute = builder.attribute("scales");
    scales.assign(attribute->floats().begin(), attribute->floats().end());
  }
  if (scales.size() != rank && sizes.size() != rank) {
    builder.fail("E1303") << "give one scale or one size per axis (" << rank << ")";
  }
  for (double scale : scales) {
    if (!(std::isfinite(scale) && scale > 0 && scale <= (1 << 20))) builder.fail("E1303") << "a scale of " << scale << " (give scales in (0, 2^20])";
  }
  Value result = x;
  for (size_t axis = 0; axis < rank; ++axis) {
    if (sizes.empty() && scales[axis] == 1.0) continue;  // the batch and channel axes, often symbolic
    const int64_t in = known_extent(builder, x.shape[axis], "a resized axis");
    const int64_t out = sizes.empty() ? static_cast<int64_t>(std::floor(static_cast<double>(in) * scales[axis])) : sizes[axis];
    const double scale = sizes.empty() ? scales[axis] : static_cast<double>(out) / static_cast<double>(in);
    if (out < 1 || out > (int64_t{1} << 20)) builder.fail("E1303") << "axis " << axis << " would have " << out << " positions";
    if (out == in && scale == 1.0) continue;
    result = resize_axis(builder, result, axis, m, scale, out);
  }
  builder.define(0, result);
}

}  // namespace

void add_resize_translators(std::map<std::string, Translator>& table) {
  table["Resize"] = [](Builder& b) { translate_resize(b, false); };
  table["Upsample"] = [](Builder& b) { translate_resize(b, true); };
}

}  // namespace presk::onnx_import
