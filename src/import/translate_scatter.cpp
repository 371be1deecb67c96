// Translators of the operators that gather, scatter and rank by run-time indices: TopK, OneHot,
// GatherND, ScatterND, ScatterElements and Scatter (its opset-9 name). Like GatherElements
// (translate_select.cpp), each compares indices with a constant vector of positions and picks
// by `where` and `sum` (one value and zeros: exact), a `max` of positions (the last write), or a
// product (ScatterND's and ScatterElements' reduction "mul"), so each keeps ONNX's exact meaning
// without a new primitive (docs/import.md).
#include <algorithm>
#include <map>
#include <string>

#include "import/builder.h"

namespace presk::onnx_import {
namespace {

// A negative index i counts from the end: i + n (a Z or real index alike).
std::string wrapped(const std::string& index, int64_t n) {
  return "where(" + index + " < 0, " + index + " + " + std::to_string(n) + ", " + index + ")";
}

// A float or integer data operand (`what` names it in the error).
Value data_input(Builder& builder, int index, bool integers_too) {
  Value value = tensor_input(builder, index);
  if (value.kind == Kind::R || (integers_too && value.kind == Kind::Z)) return value;
  builder.fail("E1304") << "operand " << index << " must be a float" << (integers_too ? " or integer" : "") << " tensor";
  return value;
}

// The row-major position of each index tuple (the last axis of `indices`, its entries along
// `dims`): Σ_k wrap(i_k) · stride_k, of the indices' shape with the last extent 1.
Value linear_index(Builder& builder, const Value& indices, const std::vector<int64_t>& dims) {
  const size_t last = indices.shape.size() - 1;
  std::string expr;
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    std::string term = wrapped(slice_text(indices.expr, last, static_cast<int64_t>(k), static_cast<int64_t>(k) + 1), dims[k]);
    if (stride != 1) term = "(" + term + ") * " + std::to_string(stride);
    expr = expr.empty() ? term : term + " + " + expr;
    stride *= dims[k];
  }
  Shape shape = indices.shape;
  shape[last] = Extent{};
  return builder.emit(expr, shape, indices.kind, "_position");
}

// TopK: the k largest (or smallest) along `axis`, sorted, ties to the lower index (ONNX's
// order), with their indices. Each element's rank is the count of the elements before it in
// that order (a sum of ones); output j is the element of rank j.
void translate_top_k(Builder& builder) {
  builder.accept_attributes({"axis", "k", "largest", "sorted"});
  Value x = data_input(builder, 0, false);
  const size_t rank = x.shape.size();
  if (rank == 0) builder.fail("E1303") << "the operand is a scalar";
  const auto axis = static_cast<size_t>(builder.normalize_axis(builder.int_attribute("axis", -1), rank, "axis"));
  const int64_t n = known_extent(builder, x.shape[axis], "the extent along the axis");
  const int64_t k = builder.opset < 10 ? builder.int_attribute("k", 0) : builder.constant_input(1, "k").integers().at(0);
  if (k < 1 || k > n) builder.fail("E1303") << "k = " << k << " is outside 1 … " << n;
  Value column = reshaped(builder, x, with_axis(x.shape, axis + 1, Extent{}), "_column");
  Value row = reshaped(builder, x, with_axis(x.shape, axis, Extent{}), "_row");
  Constant earlier;  // earlier[i, j] = 1 when j < i: a tie with an earlier element ranks after it
  earlier.shape = {n, n};
  earlier.shape.insert(earlier.shape.end(), rank - 1 - axis, 1);
  earlier.data_type = onnx::TensorProto::FLOAT;
  earlier.onnx_name = builder.node->output(0) + "_earlier";
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) earlier.mutable_values().push_back(j < i ? 1.0 : 0.0);
  }
  Value before = builder.materialize(earlier);
  const std::string better = builder.int_attribute("largest", 1) != 0 ? " > " : " < ";
  Value order = builder.emit(axis_call("sum", "where(" + row.expr + better + column.expr + ", 1.0, where(" + row.expr +
                                                  " == " + column.expr + ", " + before.expr + ", 0.0))", axis + 1),
                             column.shape, Kind::R, "_rank");
  Value wanted = positions(builder, k, rank - 1 - axis, "_order");
  Shape picked = with_axis(x.shape, axis + 1, Extent{k, {}});
  picked[axis] = Extent{};
  Shape out = x.shape;
  out[axis] = Extent{k, {}};
  const std::string hit = order.expr + " == " + wanted.expr;
  Value values = builder.emit(axis_call("sum", "where(" + hit + ", " + column.expr + ", 0.0)", axis), picked, Kind::R, "_values");
  builder.define(0, reshaped(builder, values, out, "_shape"));
  if (builder.node->output_size() < 2 || builder.node->output(1).empty()) return;
  Value at = positions(builder, n, rank - axis, "_positions");
  Value indices = builder.emit(axis_call("sum", "where(" + hit + ", " + at.expr + ", 0.0)", axis), picked, Kind::R, "_indices");
  builder.define(1, reshaped(builder, indices, out, "_indices_shape"));
}

// OneHot: values[1] where the (wrapped) index equals the position along the new axis, else
// values[0]. Float indices are truncated toward zero, as ONNX casts them to INT64.
void translate_one_hot(Builder& builder) {
  builder.accept_attributes({"axis"});
  Value index = tensor_input(builder, 0);
  if (index.kind == Kind::B) builder.fail("E1304") << "operand 0 must be a numeric tensor";
  const std::vector<double>& depths = builder.constant_input(1, "the depth").values();
  if (depths.size() != 1) builder.fail("E1303") << "the depth has " << depths.size() << " elements, not one";
  const double depth_value = depths[0];
  if (!(depth_value >= 1 && depth_value <= double{1 << 24})) builder.fail("E1303") << "the depth " << depth_value << " is outside 1 … 2^24";
  const auto depth = static_cast<int64_t>(depth_value);
  Value values = data_input(builder, 2, true);
  if (values.shape.size() != 1 || !(values.shape[0] == Extent{2, {}})) {
    builder.fail("E1308") << "the values " << shape_list(values.shape) << " are not [off, on]";
  }
  const size_t rank = index.shape.size() + 1;
  const auto axis = static_cast<size_t>(builder.normalize_axis(builder.int_attribute("axis", -1), rank, "axis"));
  if (index.kind == Kind::R) {
    index = builder.emit("where(" + index.expr + " < 0, ceil(" + index.expr + "), floor(" + index.expr + "))", index.shape,
                         Kind::R, "_truncated");
  }
  Value wide = reshaped(builder, index, with_axis(index.shape, axis, Extent{}), "_wide");
  Value at = positions(builder, depth, rank - 1 - axis, "_positions");
  Shape shape = with_axis(index.shape, axis, Extent{depth, {}});
  builder.define(0, builder.emit("where(" + wrapped(wide.expr, depth) + " == " + at.expr + ", " + slice_text(values.expr, 0, 1, 2) +
                                     ", " + slice_text(values.expr, 0, 0, 1) + ")",
                                 shape, values.kind));
}

// GatherND: out[b…, g…, rest…] = data[b…, indices[b…, g…, :], rest…] with batch_dims b. A
// run-time index into float data without batch axes is one `embed` of the data as a table of
// rows; otherwise each tuple's position is compared with the positions of the data's block.
void translate_gather_nd(Builder& builder) {
  builder.accept_attributes({"batch_dims"});
  Value data = data_input(builder, 0, true);
  Value indices = index_input(builder, 1);
  const size_t r = data.shape.size(), m = indices.shape.size();
  const int64_t b = builder.int_attribute("batch_dims", 0);
  const int64_t q = m == 0 ? 0 : known_extent(builder, indices.shape.back(), "the indices' last extent");
  if (b < 0 || static_cast<size_t>(b) >= std::min(r, m) || q < 1 || static_cast<size_t>(b + q) > r) {
    builder.fail("E1308") << "indices " << shape_list(indices.shape) << " with batch_dims " << b << " do not index data "
                          << shape_list(data.shape);
  }
  const auto batch = static_cast<size_t>(b);
  for (size_t i = 0; i < batch; ++i) {
    if (!(indices.shape[i] == data.shape[i])) builder.fail("E1308") << "the batch axis " << i << " differs";
  }
  std::vector<int64_t> dims;
  int64_t block = 1;
  for (size_t i = batch; i < batch + static_cast<size_t>(q); ++i) {
    dims.push_back(known_extent(builder, data.shape[i], "an indexed extent"));
    block *= dims.back();
  }
  Value position = linear_index(builder, indices, dims);
  Shape rest(data.shape.begin() + b + q, data.shape.end());
  Shape out(indices.shape.begin(), indices.shape.end() - 1);
  out.insert(out.end(), rest.begin(), rest.end());
  if (batch == 0 && data.kind == Kind::R && position.kind == Kind::Z) {
    Shape rows = {Extent{block, {}}};
    rows.insert(rows.end(), rest.begin(), rest.end());
    Value table = reshaped(builder, data, rows, "_table");
    Shape index_shape(indices.shape.begin(), indices.shape.end() - 1);
    if (index_shape.empty()) index_shape.push_back(Extent{});
    Value flat = reshaped(builder, position, index_shape, "_flat");
    Shape gathered = index_shape;
    gathered.insert(gathered.end(), rest.begin(), rest.end());
    Value rows_picked = builder.emit("embed(" + table.expr + ", " + flat.expr + ")", gathered, Kind::R, "_rows");
    return builder.define(0, reshaped(builder, rows_picked, out, "_shape"));
  }
  const size_t groups = m - 1 - batch;
  Shape laid(data.shape.begin(), data.shape.begin() + b);  // data as [b…, 1…, block, rest…]
  laid.insert(laid.end(), groups, Extent{});
  laid.push_back(Extent{block, {}});
  laid.insert(laid.end(), rest.begin(), rest.end());
  Value table = reshaped(builder, data, laid, "_blocks");
  Shape tuple = position.shape;  // [b…, g…, 1, 1…]
  tuple.insert(tuple.end(), rest.size(), Extent{});
  Value wide = reshaped(builder, position, tuple, "_wide");
  Value at = positions(builder, block, rest.size(), "_positions");
  Shape summed(indices.shape.begin(), indices.shape.end() - 1);
  summed.push_back(Extent{});
  summed.insert(summed.end(), rest.begin(), rest.end());
  const std::string zero = data.kind == Kind::Z ? "(" + table.expr + " - " + table.expr + ")" : "0.0";
  Value picked = builder.emit(axis_call("sum", "where(" + wide.expr + " == " + at.expr + ", " + table.expr + ", " + zero + ")", m - 1),
                              summed, data.kind, "_picked");
  builder.define(0, reshaped(builder, picked, out, "_shape"));
}

// The scatter of `updates` into `data` along `axis` of the pair shape [.., n, m, ..] (n data
// positions, m updates), given the `hit` comparison of that shape: reduction none (the last
// update written wins, as ONNX writes them in order), add or mul.
Value scattered(Builder& builder, const Value& data, const std::string& hit, const Value& updates, size_t axis,
                int64_t m, const Shape& pair, size_t trailing) {
  const std::string reduction = builder.string_attribute("reduction", "none");
  if (reduction == "add") {
    return builder.emit(data.expr + " + " + axis_call("sum", "where(" + hit + ", " + updates.expr + ", 0.0)", axis + 1),
                        data.shape, Kind::R, "_scattered");
  }
  if (reduction == "mul") {
    Value factors = builder.emit("where(" + hit + ", " + updates.expr + ", 1.0)", pair, Kind::R, "_factors");
    Value product_value = product_along(builder, factors, axis + 1, "_product");
    return builder.emit(data.expr + " * " + product_value.expr, data.shape, Kind::R, "_scattered");
  }
  if (reduction != "none") {
    builder.fail("E1303") << "reduction=\"" << printable(reduction) << "\" is not supported (supported: none, add, mul)";
  }
  Value at = positions(builder, m, trailing, "_updates");
  Value last = builder.emit(axis_call("max", "where(" + hit + ", " + at.expr + ", -1.0)", axis + 1), data.shape, Kind::R, "_last");
  Value picked = builder.emit(axis_call("sum", "where(" + at.expr + " == " + last.expr + ", " + updates.expr + ", 0.0)", axis + 1),
                              data.shape, Kind::R, "_picked");
  return builder.emit("where(" + last.expr + " < 0, " + data.expr + ", " + picked.expr + ")", data.shape, Kind::R, "_scattered");
}

// ScatterElements (and Scatter): data[.., indices[.., j, ..], ..] = updates[.., j, ..] along
// `axis`; the indices cover the data on every other axis.
void translate_scatter_elements(Builder& builder) {
  builder.accept_attributes({"axis", "reduction"});
  Value data = data_input(builder, 0, false);
  Value indices = index_input(builder, 1);
  Value updates = data_input(builder, 2, false);
  const size_t rank = data.shape.size();
  if (rank == 0 || indices.shape != updates.shape || indices.shape.size() != rank) {
    builder.fail("E1308") << "indices " << shape_list(indices.shape) << " and updates " << shape_list(updates.shape)
                          << " do not match data " << shape_list(data.shape);
  }
  const auto axis = static_cast<size_t>(builder.normalize_axis(builder.int_attribute("axis", 0), rank, "axis"));
  for (size_t i = 0; i < rank; ++i) {
    if (i != axis && !(indices.shape[i] == data.shape[i])) {
      builder.fail("E1303") << "the indices' extent " << extent_text(indices.shape[i]) << " on axis " << i << " is not the data's "
                            << extent_text(data.shape[i]) << "; presk imports indices that cover the other axes";
    }
  }
  const int64_t n = known_extent(builder, data.shape[axis], "the data's extent along the axis");
  const int64_t m = known_extent(builder, indices.shape[axis], "the indices' extent along the axis");
  Value index = builder.emit(wrapped(indices.expr, n), indices.shape, indices.kind, "_wrapped");
  Value index_wide = reshaped(builder, index, with_axis(indices.shape, axis, Extent{}), "_index");
  Value updates_wide = reshaped(builder, updates, with_axis(updates.shape, axis, Extent{}), "_update");
  Value data_wide = reshaped(builder, data, with_axis(data.shape, axis + 1, Extent{}), "_data");
  Value at = positions(builder, n, rank - axis, "_positions");
  Shape pair = with_axis(data.shape, axis + 1, Extent{m, {}});
  Value result = scattered(builder, data_wide, index_wide.expr + " == " + at.expr, updates_wide, axis, m, pair, rank - 1 - axis);
  builder.define(0, reshaped(builder, result, data.shape, "_shape"));
}

// ScatterND: data[indices[g, :], rest…] = updates[g, rest…], over the data as [block, rest…]
// and the updates as [G, rest…].
void translate_scatter_nd(Builder& builder) {
  builder.accept_attributes({"reduction"});
  Value data = data_input(builder, 0, false);
  Value indices = index_input(builder, 1);
  Value updates = data_input(builder, 2, false);
  const size_t r = data.shape.size(), m = indices.shape.size();
  const int64_t q = m == 0 ? 0 : known_extent(builder, indices.shape.back(), "the indices' last extent");
  if (q < 1 || static_cast<size_t>(q) > r) {
    builder.fail("E1308") << "indices " << shape_list(indices.shape) << " do not index data " << shape_list(data.shape);
  }
  Shape rest(data.shape.begin() + q, data.shape.end());
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), rest.begin(), rest.end());
  if (updates.shape != expected) {
    builder.fail("E1308") << "the updates " << shape_list(updates.shape) << " are not " << shape_list(expected);
  }
  std::vector<int64_t> dims;
  int64_t block = 1;
  for (size_t i = 0; i < static_cast<size_t>(q); ++i) {
    dims.push_back(known_extent(builder, data.shape[i], "an indexed extent"));
    block *= dims.back();
  }
  const int64_t count = known_extent(builder, product(indices.shape, 0, m - 1), "the number of updates");
  Value position = linear_index(builder, indices, dims);
  Shape flat = {Extent{}, Extent{count, {}}};  // [1, count, 1…]: against the positions [block, 1, 1…]
  flat.insert(flat.end(), rest.size(), Extent{});  // (a lone block's position is the scalar 0)
  Value tuple = reshaped(builder, position, flat, "_flat");
  Shape update_rows = {Extent{count, {}}};
  update_rows.insert(update_rows.end(), rest.begin(), rest.end());
  Value update_flat = reshaped(builder, updates, update_rows, "_update");
  Shape laid = {Extent{block, {}}, Extent{}};
  laid.insert(laid.end(), rest.begin(), rest.end());
  Value data_wide = reshaped(builder, data, laid, "_data");
  Value at = positions(builder, block, 1 + rest.size(), "_positions");
  Shape pair = {Extent{block, {}}, Extent{count, {}}};
  pair.insert(pair.end(), rest.begin(), rest.end());
  Value result = scattered(builder, data_wide, tuple.expr + " == " + at.expr, update_flat, 0, count, pair, rest.size());
  builder.define(0, reshaped(builder, result, data.shape, "_shape"));
}

}  // namespace

void add_scatter_translators(std::map<std::string, Translator>& table) {
  table["TopK"] = translate_top_k;
  table["OneHot"] = translate_one_hot;
  table["GatherND"] = translate_gather_nd;
  table["ScatterElements"] = translate_scatter_elements;
  table["Scatter"] = translate_scatter_elements;
  table["ScatterND"] = translate_scatter_nd;
}

}  // namespace presk::onnx_import
