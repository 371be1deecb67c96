// GroupNormalization (opsets 18 and 21; docs/import.md): the channels split into num_groups
// groups, each (n, group) normalized over its channels and spatial axes,
//   y = (x − mean) / √(var + ε) · scale + bias,
// with scale and bias per group (opset 18: num_groups values) or per channel (opset 21: C
// values; when C = num_groups the two are the same). stash_type (the precision ONNX Runtime
// computes the statistics in) has no meaning here: the statistics are the exact ones.
#include <string>

#include "import/builder.h"
#include "ir/ir.h"

namespace presk::onnx_import {
namespace {

// Operand `index` (scale or bias) of `count` values laid as [count, 1, …] with `trailing` ones.
Value laid_vector(Builder& builder, int index, const Extent& count, size_t trailing, const std::string& suffix) {
  Value value = tensor_input(builder, index);
  if (value.kind != Kind::R) builder.fail("E1304") << "operand " << index << " must be a float tensor";
  Shape laid(trailing + 1, Extent{});
  laid[0] = count;
  return reshaped(builder, value, laid, suffix);
}

void translate_group_norm(Builder& builder) {
  builder.accept_attributes({"epsilon", "num_groups", "stash_type"});
  const Value& x = real_input(builder, 0);
  if (x.shape.size() < 2) builder.fail("E1308") << "the input has rank " << x.shape.size() << "; GroupNormalization needs [N, C, …]";
  const int64_t channels = known_extent(builder, x.shape[1], "the channel axis");
  const int64_t groups = builder.int_attribute("num_groups", 0);
  if (groups <= 0 || channels % groups != 0) {
    builder.fail("E1303").hint("num_groups must divide the number of channels")
        << "num_groups " << groups << " does not divide the " << channels << " channels";
  }
  const int64_t per_scale = product(onnx_shape(builder.raw_input(1)), 0, onnx_shape(builder.raw_input(1)).size()).factor;
  const bool per_channel = per_scale == channels && channels != groups;
  if (!per_channel && per_scale != groups) {
    builder.fail("E1308") << "scale has " << per_scale << " values for " << groups << " groups of " << channels / groups
                          << " channels (opset 18: one per group; opset 21: one per channel)";
  }
  // x as [N, G, C/G, spatial…]; the statistics over every axis after G.
  Shape grouped = {x.shape[0], Extent{groups, {}}, Extent{channels / groups, {}}};
  grouped.insert(grouped.end(), x.shape.begin() + 2, x.shape.end());
  Value xg = reshaped(builder, x, grouped, "_grouped");
  std::string axes;
  Shape kept = grouped;
  for (size_t axis = 2; axis < grouped.size(); ++axis) {
    axes += (axis == 2 ? "" : ", ") + std::to_string(axis);
    kept[axis] = Extent{};
  }
  const std::string over = ", axis: [" + axes + "])";
  const std::string epsilon = ir::real_to_string(builder.float_attribute("epsilon", 1e-5f));
  Value mean = builder.emit("mean(" + xg.expr + over, kept, Kind::R, "_mean");
  Value centered = builder.emit(xg.expr + " - " + mean.expr, grouped, Kind::R, "_centered");
  Value variance = builder.emit("mean(" + centered.expr + " * " + centered.expr + over, kept, Kind::R, "_variance");
  std::string normalized = centered.expr + " * rsqrt(" + variance.expr + " + " + epsilon + ")";
  if (per_channel) {
    Value plain = reshaped(builder, builder.emit(normalized, grouped, Kind::R, "_normalized"), x.shape, "_ungrouped");
    Value scale = laid_vector(builder, 1, x.shape[1], x.shape.size() - 2, "_scale");
    Value bias = laid_vector(builder, 2, x.shape[1], x.shape.size() - 2, "_bias");
    return builder.define(0, builder.emit(plain.expr + " * " + scale.expr + " + " + bias.expr, x.shape));
  }
  Value scale = laid_vector(builder, 1, Extent{groups, {}}, grouped.size() - 2, "_scale");
  Value bias = laid_vector(builder, 2, Extent{groups, {}}, grouped.size() - 2, "_bias");
  Value y = builder.emit(normalized + " * " + scale.expr + " + " + bias.expr, grouped, Kind::R, "_affine");
  builder.define(0, reshaped(builder, y, x.shape));
}

}  // namespace

void add_group_norm_translators(std::map<std::string, Translator>& table) {
  table["GroupNormalization"] = translate_group_norm;
}

}  // namespace presk::onnx_import
