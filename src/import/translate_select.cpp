// Translators of the operators that select by an index: ArgMax, ArgMin, GatherElements,
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. Each compares the indices with a
// constant vector of positions 0 … C−1 (a parameter) and picks by `where` and `sum` (a sum of
// one value and zeros: exact), so no new primitive is needed (docs/import.md).
#include <string>

#include "import/builder.h"

namespace presk::onnx_import {

// The positions 0 … count−1 along the first of `1 + trailing` axes, as a parameter of reals
// (`[count, 1, …]`), named after the node's output and `suffix`.
Value positions(Builder& builder, int64_t count, size_t trailing, const std::string& suffix) {
  Constant constant;
  constant.shape.assign(1 + trailing, 1);
  constant.shape[0] = count;
  constant.data_type = onnx::TensorProto::FLOAT;
  constant.onnx_name = builder.node->output(0) + suffix;
  for (int64_t i = 0; i < count; ++i) constant.mutable_values().push_back(static_cast<double>(i));
  if (count == 1) return Value{"0.0", {}, Kind::R, nullptr};
  return builder.materialize(constant);
}

// An index operand: a run-time Z tensor as it is, a constant one as reals (exact).
Value index_input(Builder& builder, int index) {
  Value& raw = builder.raw_input(index);
  if (raw.constant && raw.expr.empty()) {
    if (raw.constant->is_float() || raw.constant->is_symbolic()) {
      builder.fail("E1304") << "operand " << index << " must be an integer tensor";
    }
    Constant real = *raw.constant;
    real.data_type = onnx::TensorProto::FLOAT;
    Value value = builder.materialize(real);
    return reshaped(builder, value, onnx_shape(raw), "_indices");
  }
  if (raw.kind != Kind::Z) builder.fail("E1304") << "operand " << index << " must be an INT64 or INT32 tensor";
  return raw;
}

Shape with_axis(Shape shape, size_t at, Extent extent) {
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(at), extent);
  return shape;
}

std::string axis_call(const std::string& function, const std::string& x, size_t axis) {
  return function + "(" + x + ", axis: " + std::to_string(axis) + ")";
}

namespace {

// ArgMax/ArgMin: the first (or with select_last_index the last) position of the maximum
// (minimum) along `axis`, as a real holding the integer.
void translate_arg(Builder& builder, bool is_max) {
  builder.accept_attributes({"axis", "keepdims", "select_last_index"});
  const Value& x = real_input(builder, 0);
  const size_t rank = x.shape.size();
  if (rank == 0) builder.fail("E1303") << "the operand is a scalar";
  const auto axis = static_cast<size_t>(builder.normalize_axis(builder.int_attribute("axis", 0), rank, "axis"));
  const int64_t count = known_extent(builder, x.shape[axis], "the extent along the axis");
  Shape kept = x.shape;
  kept[axis] = Extent{1, {}};
  std::string extreme = is_max ? axis_call("max", x.expr, axis) : "-" + axis_call("max", "-" + operand(x), axis);
  Value best = builder.emit(extreme, kept, Kind::R, "_extreme");
  Value at = positions(builder, count, rank - 1 - axis, "_positions");
  std::string hit = operand(x) + " == " + best.expr;
  std::string expr = builder.int_attribute("select_last_index", 0) != 0
                         ? axis_call("max", "where(" + hit + ", " + at.expr + ", -1.0)", axis)
                         : "-" + axis_call("max", "where(" + hit + ", -" + operand(at) + ", " +
                                                      std::to_string(-count) + ".0)", axis);
  Value index = builder.emit(expr, kept, Kind::R);
  if (builder.int_attribute("keepdims", 1) != 0) return builder.define(0, index);
  Shape dropped = x.shape;
  dropped.erase(dropped.begin() + static_cast<std::ptrdiff_t>(axis));
  builder.define(0, reshaped(builder, index, dropped, "_shape"));
}

// GatherElements: out[…, i, …] = data[…, indices[…, i, …], …] along `axis`. The data gets an
// axis of extent 1 before `axis`, the indices one after it; their comparison with the positions
// selects one element of each row, summed out.
void translate_gather_elements(Builder& builder) {
  builder.accept_attributes({"axis"});
  Value data = tensor_input(builder, 0);
  if (data.kind != Kind::R) builder.fail("E1304") << "operand 0 must be a float tensor";
  Value indices = index_input(builder, 1);
  const size_t rank = data.shape.size();
  if (indices.shape.size() != rank || rank == 0) {
    builder.fail("E1308") << "the indices have rank " << indices.shape.size() << ", the data " << rank;
  }
  const auto axis = static_cast<size_t>(builder.normalize_axis(builder.int_attribute("axis", 0), rank, "axis"));
  const int64_t count = known_extent(builder, data.shape[axis], "the data's extent along the axis");
  for (size_t i = 0; i < rank; ++i) {
    if (i != axis && !(indices.shape[i] == data.shape[i])) {
      builder.fail("E1308") << "the indices' extent " << extent_text(indices.shape[i]) << " on axis " << i
                            << " differs from the data's " << extent_text(data.shape[i]);
    }
  }
  Value data_wide = reshaped(builder, data, with_axis(data.shape, axis, Extent{1, {}}), "_data");
  Value index_wide = reshaped(builder, indices, with_axis(indices.shape, axis + 1, Extent{1, {}}), "_index");
  Value at = positions(builder, count, rank - 1 - axis, "_positions");
  std::string index = index_wide.expr;
  Value normalized = builder.emit("where(" + index + " < 0, " + index + " + " + std::to_string(count) + ", " + index + ")",
                                  index_wide.shape, index_wide.kind, "_wrapped");
  Shape picked = with_axis(indices.shape, axis + 1, Extent{1, {}});
  Value sum = builder.emit(axis_call("sum", "where(" + normalized.expr + " == " + at.expr + ", " + data_wide.expr + ", 0.0)",
                                     axis + 1),
                           picked, Kind::R, "_picked");
  builder.define(0, reshaped(builder, sum, indices.shape, "_shape"));
}

// −input[n, target[n, d…], d…] · weight[target] with ignore_index and the reduction, for
// `scores` [N, C, d…] (reals) and the target [N, d…]: NegativeLogLikelihoodLoss, and
// SoftmaxCrossEntropyLoss after its log_softmax.
void negative_log_likelihood(Builder& builder, const Value& scores, bool has_weight) {
  const size_t rank = scores.shape.size();
  if (rank < 2) builder.fail("E1308") << "the input needs at least two axes [N, C]";
  const int64_t classes = known_extent(builder, scores.shape[1], "the number of classes");
  Value target = index_input(builder, 1);
  Shape target_shape = scores.shape;
  target_shape.erase(target_shape.begin() + 1);
  if (target.shape != target_shape) {
    builder.fail("E1308") << "the target has the shape " << shape_list(target.shape) << ", not " << shape_list(target_shape);
  }
  Shape kept = with_axis(target_shape, 1, Extent{1, {}});
  Value wide = reshaped(builder, target, kept, "_target");
  Value at = positions(builder, classes, rank - 2, "_classes");
  std::string hit = wide.expr + " == " + at.expr;
  Value picked = builder.emit(axis_call("sum", "where(" + hit + ", " + scores.expr + ", 0.0)", 1), kept, Kind::R, "_picked");
  const bool ignore = builder.attribute("ignore_index") != nullptr;
  const std::string ignored = wide.expr + " == " + std::to_string(builder.int_attribute("ignore_index", 0));
  std::string loss_expr = "-" + picked.expr;
  Value weight;
  if (has_weight || ignore) {
    std::string per_class = "1.0";
    if (has_weight) {
      Shape laid(rank - 1, Extent{1, {}});
      laid[0] = Extent{classes, {}};
      Value w = reshaped(builder, real_input(builder, 2), laid, "_weight_axis");
      per_class = w.expr;
    }
    std::string chosen = axis_call("sum", "where(" + hit + ", " + per_class + ", 0.0)", 1);
    if (ignore) chosen = "where(" + ignored + ", 0.0, " + chosen + ")";
    weight = builder.emit(chosen, kept, Kind::R, "_weight");
    loss_expr = ignore ? "where(" + ignored + ", 0.0, -(" + picked.expr + " * " + weight.expr + "))"
                       : "-(" + picked.expr + " * " + weight.expr + ")";
  }
  Value loss = builder.emit(loss_expr, kept, Kind::R, "_loss");
  const std::string reduction = builder.string_attribute("reduction", "mean");
  if (reduction == "none") return builder.define(0, reshaped(builder, loss, target_shape, "_shape"));
  if (reduction == "sum") return builder.define(0, builder.emit("sum(" + loss.expr + ")", {}, Kind::R, "_sum"));
  if (reduction != "mean") {
    builder.fail("E1303") << "reduction=\"" << printable(reduction) << "\" is not supported (supported: none, sum, mean)";
  }
  if (weight.expr.empty()) return builder.define(0, builder.emit("mean(" + loss.expr + ")", {}, Kind::R, "_mean"));
  builder.define(0, builder.emit("sum(" + loss.expr + ") / sum(" + weight.expr + ")", {}, Kind::R, "_mean"));
}

void translate_nll(Builder& builder) {
  builder.accept_attributes({"ignore_index", "reduction"});
  Value scores = tensor_input(builder, 0);
  if (scores.kind != Kind::R) builder.fail("E1304") << "operand 0 must be a float tensor";
  negative_log_likelihood(builder, scores, builder.has_input(2));
}

// SoftmaxCrossEntropyLoss: log_softmax along the classes (axis 1), its optional second output,
// then the negative log-likelihood.
void translate_softmax_cross_entropy(Builder& builder) {
  builder.accept_attributes({"ignore_index", "reduction"});
  Value scores = tensor_input(builder, 0);
  if (scores.kind != Kind::R) builder.fail("E1304") << "operand 0 must be a float tensor";
  if (scores.shape.size() < 2) builder.fail("E1308") << "the scores need at least two axes [N, C]";
  Value log_prob = builder.emit("log_softmax(" + scores.expr + ", axis: 1)", scores.shape, Kind::R, "_log_prob");
  if (builder.node->output_size() > 1 && !builder.node->output(1).empty()) builder.define(1, log_prob);
  negative_log_likelihood(builder, log_prob, builder.has_input(2));
}

}  // namespace

void add_select_translators(std::map<std::string, Translator>& table) {
  table["ArgMax"] = [](Builder& b) { translate_arg(b, true); };
  table["ArgMin"] = [](Builder& b) { translate_arg(b, false); };
  table["GatherElements"] = translate_gather_elements;
  table["NegativeLogLikelihoodLoss"] = translate_nll;
  table["SoftmaxCrossEntropyLoss"] = translate_softmax_cross_entropy;
}

}  // namespace presk::onnx_import
