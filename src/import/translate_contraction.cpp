// Translators of the operators that sum or normalize: MatMul, Gemm, Softmax, LogSoftmax and
// LayerNormalization (the Reduce operators: translate_reduce.cpp).
#include <algorithm>

#include "import/builder.h"
#include "ir/ir.h"

namespace presk::onnx_import {
namespace {

std::string axes_list(const std::vector<int64_t>& axes) {
  std::string text = "[";
  for (size_t i = 0; i < axes.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(axes[i]);
  return text + "]";
}

// One operand's side of a matmul as einsum labels; size-1 batch axes the other operand
// stretches are dropped from the operand (by a reshape) and from its labels.
struct MatmulSide {
  std::string labels;
  Shape kept;  // the operand's shape without the dropped axes
};

// numpy matmul: [..., m, k] @ [..., k, n] with the batch axes broadcast; a vector operand
// drops its side. Written `a @ b` where presk's `@` means exactly that, else as an einsum.
void translate_matmul(Builder& builder) {
  builder.accept_attributes({});
  const Value& a = real_input(builder, 0);
  const Value& b = real_input(builder, 1);
  size_t ra = a.shape.size(), rb = b.shape.size();
  if (ra == 0 || rb == 0) builder.fail("E1308") << "MatMul needs operands of rank 1 or more";
  Extent ka = a.shape[ra - 1], kb = rb == 1 ? b.shape[0] : b.shape[rb - 2];
  if (!(ka == kb)) {
    builder.fail("E1308") << "the contracted extents differ: " << shape_list(a.shape) << " @ " << shape_list(b.shape);
  }
  Shape batch_a(a.shape.begin(), a.shape.end() - std::min<size_t>(ra, 2));
  Shape batch_b(b.shape.begin(), b.shape.end() - std::min<size_t>(rb, 2));
  if (ra >= 2 && rb == 2) {  // presk's `@` with the right operand a matrix
    Shape shape = a.shape;
    shape.back() = b.shape[1];
    builder.define(0, builder.emit(operand(a) + " @ " + operand(b), shape));
    return;
  }
  size_t batch = std::max(batch_a.size(), batch_b.size());
  if (batch > 8) builder.fail("E1308") << "MatMul with more than 8 batch axes is not supported";
  MatmulSide side_a, side_b;
  Shape result;
  for (size_t i = 0; i < batch; ++i) {
    std::optional<Extent> ea, eb;
    if (i + batch_a.size() >= batch) ea = batch_a[i + batch_a.size() - batch];
    if (i + batch_b.size() >= batch) eb = batch_b[i + batch_b.size() - batch];
    char label = static_cast<char>('a' + i);
    bool keep_a = ea && (!eb || *ea == *eb || !(*ea == Extent{}));
    bool keep_b = eb && (!ea || *ea == *eb || !(*eb == Extent{}));
    if (ea && eb && !(*ea == *eb) && !(*ea == Extent{}) && !(*eb == Extent{})) {
      builder.fail("E1308") << "the batch axes of " << shape_list(a.shape) << " and " << shape_list(b.shape) << " do not broadcast";
    }
    if (keep_a) side_a.labels += label, side_a.kept.push_back(*ea);
    if (keep_b) side_b.labels += label, side_b.kept.push_back(*eb);
    result.push_back(keep_a ? *ea : *eb);
  }
  if (ra >= 2) side_a.labels += "m", side_a.kept.push_back(a.shape[ra - 2]), result.push_back(a.shape[ra - 2]);
  side_a.labels += "k", side_a.kept.push_back(ka);
  side_b.labels += "k", side_b.kept.push_back(kb);
  if (rb >= 2) side_b.labels += "n", side_b.kept.push_back(b.shape[rb - 1]), result.push_back(b.shape[rb - 1]);
  Value left = reshaped(builder, a, side_a.kept, "_a");
  Value right = reshaped(builder, b, side_b.kept, "_b");
  std::string output;
  for (size_t i = 0; i < batch; ++i) output += static_cast<char>('a' + i);
  if (ra >= 2) output += "m";
  if (rb >= 2) output += "n";
  std::string spec = side_a.labels + "," + side_b.labels + "->" + output;
  builder.define(0, builder.emit("einsum(\"" + spec + "\", " + left.expr + ", " + right.expr + ")", result));
}

// alpha · A' B' + beta · C, A' = Aᵀ when transA (B' likewise).
void translate_gemm(Builder& builder) {
  builder.accept_attributes({"alpha", "beta", "transA", "transB", "broadcast"});
  float alpha = builder.float_attribute("alpha", 1.0f), beta = builder.float_attribute("beta", 1.0f);
  bool trans_a = builder.int_attribute("transA", 0) != 0, trans_b = builder.int_attribute("transB", 0) != 0;
  const Value& a = real_input(builder, 0);
  const Value& b = real_input(builder, 1);
  if (a.shape.size() != 2 || b.shape.size() != 2) builder.fail("E1308") << "Gemm needs two matrices";
  Extent m = a.shape[trans_a ? 1 : 0], ka = a.shape[trans_a ? 0 : 1];
  Extent kb = b.shape[trans_b ? 1 : 0], n = b.shape[trans_b ? 0 : 1];
  if (!(ka == kb)) builder.fail("E1308") << "the contracted extents of A and B differ";
  // A transposed operand is read in place by an einsum (one contraction, no transposed copy
  // stored at a site of its own); the sums are the same, term for term.
  std::string expr = !trans_a && !trans_b ? operand(a) + " @ " + operand(b)
                                          : std::string("einsum(\"") + (trans_a ? "km" : "mk") + "," +
                                                (trans_b ? "nk" : "kn") + "->mn\", " + a.expr + ", " + b.expr + ")";
  if (alpha != 1.0f) expr += " * " + operand(Value{ir::real_to_string(alpha), {}, Kind::R, nullptr});
  Shape shape = {m, n};
  if (builder.has_input(2) && beta != 0.0f) {
    const Value& c = real_input(builder, 2);
    if (!(broadcast_shapes(builder, shape, onnx_shape(c)) == shape)) {
      builder.fail("E1308") << "C of shape " << shape_list(onnx_shape(c)) << " does not broadcast to " << shape_list(shape);
    }
    expr += " + " + operand(c);
    if (beta != 1.0f) expr += " * " + operand(Value{ir::real_to_string(beta), {}, Kind::R, nullptr});
  }
  builder.define(0, builder.emit(expr, shape));
}

// Softmax and LogSoftmax along one axis (opset 13); before 13 over the axes from `axis`
// on, flattened (a reshape on either side when that is more than the last axis).
void translate_softmax(Builder& builder, const std::string& function) {
  builder.accept_attributes({"axis"});
  const Value& x = real_input(builder, 0);
  size_t rank = x.shape.size();
  int64_t axis = builder.normalize_axis(builder.int_attribute("axis", builder.opset >= 13 ? -1 : 1), rank, "axis");
  if (builder.opset >= 13 || axis == static_cast<int64_t>(rank) - 1) {
    return builder.define(0, builder.emit(function + "(" + x.expr + ", axis: " + std::to_string(axis) + ")", x.shape));
  }
  Shape flat = {product(x.shape, 0, axis), product(x.shape, axis, rank)};
  Value rows = reshaped(builder, x, flat, "_rows");
  Value normalized = builder.emit(function + "(" + rows.expr + ", axis: 1)", flat, Kind::R, "_flat");
  builder.define(0, reshaped(builder, normalized, x.shape));
}

// (x − mean) / √(var + ε) · scale + bias over the axes from `axis` on, var the mean of
// the squared deviations (opset 17); the optional outputs Mean and InvStdDev 1/√(var + ε).
void translate_layer_norm(Builder& builder) {
  builder.accept_attributes({"axis", "epsilon", "stash_type"});
  const Value& x = real_input(builder, 0);
  const Value& scale = real_input(builder, 1);
  size_t rank = x.shape.size();
  int64_t axis = builder.normalize_axis(builder.int_attribute("axis", -1), rank, "axis");
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < static_cast<int64_t>(rank); ++i) axes.push_back(i);
  std::string over = ", axis: " + axes_list(axes) + ")";
  Shape kept = x.shape;
  for (int64_t i : axes) kept[i] = Extent{};
  std::string epsilon = ir::real_to_string(builder.float_attribute("epsilon", 1e-5f));
  Value mean = builder.emit("mean(" + x.expr + over, kept, Kind::R, "_mean");
  Value centered = builder.emit(x.expr + " - " + mean.expr, x.shape, Kind::R, "_centered");
  Value variance = builder.emit("mean(" + centered.expr + " * " + centered.expr + over, kept, Kind::R, "_variance");
  std::string inverse = "rsqrt(" + variance.expr + " + " + epsilon + ")";
  const bool statistics = builder.node->output_size() > 1;  // the Mean and InvStdDev outputs
  if (statistics) {
    builder.define(1, mean);
    Value inverse_value = builder.emit(inverse, kept, Kind::R, "_inv_std_dev");
    if (builder.node->output_size() > 2) builder.define(2, inverse_value);
    inverse = inverse_value.expr;
  }
  std::string expr = centered.expr + " * " + inverse + " * " + operand(scale);
  std::vector<const Value*> operands = {&x, &scale};
  if (builder.has_input(2)) {
    const Value& bias = real_input(builder, 2);
    expr += " + " + operand(bias);
    operands.push_back(&bias);
  }
  Shape shape;
  for (const Value* value : operands) shape = broadcast_shapes(builder, shape, onnx_shape(*value));
  if (!(shape == x.shape)) builder.fail("E1308") << "scale and bias must broadcast to the input's shape";
  builder.define(0, builder.emit(expr, x.shape));
}

}  // namespace

void add_contraction_translators(std::map<std::string, Translator>& table) {
  table["MatMul"] = translate_matmul;
  table["Gemm"] = translate_gemm;
  table["Softmax"] = [](Builder& b) { translate_softmax(b, "softmax"); };
  table["LogSoftmax"] = [](Builder& b) { translate_softmax(b, "log_softmax"); };
  table["LayerNormalization"] = translate_layer_norm;
}

}  // namespace presk::onnx_import
