// Cast in every direction presk expresses exactly (docs/import.md, "Casts"):
//   between float types     the identity over the reals (the realization chooses machine types),
//                           but to FLOAT16/BFLOAT16, a rounding of its own (round_f16, round_bf16);
//   integer/boolean → float `x + 0.0` (the language converts Z exactly, B as 0/1);
//   float → integer         truncation toward zero, as ONNX's (and C's) conversion, and beyond the
//                           type's range (which ONNX leaves undefined) saturation at its bounds,
//                           NaN to 0 — Rust's `as` and TensorRT's choice; the result holds the
//                           integers as reals (presk has no conversion from R to Z), which only
//                           the operators that move, select or compare values may read
//                           (check_integer_reals);
//   integer → integer       the identity when the target holds every value of the source type,
//                           else ONNX's wrap-around into the target's range (wrapped_into);
//   anything → BOOL         `x != 0` (NaN is true, as ONNX's "all else to True").
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "import/builder.h"
#include "import/onnx_reader.h"

namespace presk::onnx_import {
namespace {

bool is_float_type(int64_t type) {
  return type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE || type == onnx::TensorProto::FLOAT16 ||
         type == onnx::TensorProto::BFLOAT16;
}

// A Cast to FLOAT16 or BFLOAT16 of a real value (a float constant or a run-time real): a
// rounding to a narrower format, which is part of the model's meaning (round_f16, round_bf16).
bool narrows_float(int64_t to, const Value& x) {
  if (to != onnx::TensorProto::FLOAT16 && to != onnx::TensorProto::BFLOAT16) return false;
  if (!x.constant) return x.kind != Kind::B;  // integers too: ONNX rounds them to the format
  int from = x.constant->data_type;
  return from == onnx::TensorProto::FLOAT || from == onnx::TensorProto::DOUBLE ||
         (from != to && (from == onnx::TensorProto::FLOAT16 || from == onnx::TensorProto::BFLOAT16));
}

std::string real_literal(int64_t value) { return std::to_string(value) + ".0"; }

// Truncation toward zero with saturation at [lo, hi] and NaN to 0, one let:
// where(x < 0, ceil(max(x, lo)), floor(min(max(x, 0), hi))) — exact (floor and ceil are).
void cast_float_to_integer(Builder& builder, const Value& x, int64_t to) {
  const auto [low, high] = *integer_range(static_cast<int>(to));
  const std::string xs = operand(x);
  std::string expr = "where(" + xs + " < 0, ceil(max(" + x.expr + ", " + real_literal(low) + ")), floor(min(max(" + x.expr +
                     ", 0.0), " + real_literal(high) + ")))";
  if (low == 0) expr = "floor(min(max(" + x.expr + ", 0.0), " + real_literal(high) + "))";
  builder.define(0, builder.emit(expr, x.shape));
  builder.integer_reals[builder.node->output(0)] = static_cast<int>(to);
}

// Whether every value of `from` is one of `to` (both integer types).
bool holds(int to, int from) {
  auto target = integer_range(to), source = integer_range(from);
  return target && source && target->first <= source->first && source->second <= target->second;
}

void translate_cast(Builder& builder) {
  builder.accept_attributes({"to", "saturate"});
  const int64_t to = builder.int_attribute("to", 0);
  const Value& x = builder.raw_input(0);
  const std::string& source = builder.node->input(0);
  if (narrows_float(to, x)) {  // the rounding to the narrower format, an op of its own
    const Value& real = builder.input(0);
    std::string function = to == onnx::TensorProto::FLOAT16 ? "round_f16(" : "round_bf16(";
    return define_elementwise(builder, function + real.expr + (real.kind == Kind::Z ? " + 0.0)" : ")"), {&real});
  }
  if (x.constant && x.expr.empty()) {  // shape arithmetic: cast the constant
    Constant cast = *x.constant;
    cast.data_type = static_cast<int>(to);
    if (!is_float_type(to)) for (double& value : cast.mutable_values()) value = std::trunc(value);
    cast.onnx_name = builder.node->output(0);
    return builder.define(0, Value{"", {}, Kind::R, std::make_shared<Constant>(std::move(cast))});
  }
  auto integer_real = builder.integer_reals.find(source);
  if (is_float_type(to)) {
    if (x.kind == Kind::R) return builder.define(0, x);
    return builder.define(0, builder.emit(operand(x) + " + 0.0", x.shape));
  }
  if (to == onnx::TensorProto::BOOL) {
    if (x.kind == Kind::B) return builder.define(0, x);
    return builder.define(0, builder.emit(operand(x) + (x.kind == Kind::R ? " != 0.0" : " != 0"), x.shape, Kind::B));
  }
  if (!integer_range(static_cast<int>(to))) {
    builder.fail("E1304").hint("cast to FLOAT, DOUBLE, FLOAT16, BFLOAT16, BOOL, INT8 … INT64 or UINT8 … UINT32")
        << "Cast to " << data_type_name(static_cast<int>(to)) << " is not supported";
  }
  if (x.kind == Kind::B) {  // {1, 0}, held as reals
    builder.define(0, builder.emit("where(" + x.expr + ", 1.0, 0.0)", x.shape));
    builder.integer_reals[builder.node->output(0)] = static_cast<int>(to);
    return;
  }
  if (x.kind == Kind::Z) {
    auto stated = builder.element_types.find(source);
    const int from = stated == builder.element_types.end() ? onnx::TensorProto::INT64 : stated->second;
    if (holds(static_cast<int>(to), from)) return builder.define(0, x);
    builder.define(0, wrapped_into(builder, x, integer_bits(from), static_cast<int>(to), "_wrapped"));
    builder.element_types[builder.node->output(0)] = static_cast<int>(to);
    return;
  }
  if (integer_real != builder.integer_reals.end()) {  // integers held as reals
    if (!holds(static_cast<int>(to), integer_real->second)) {
      builder.fail("E1356").hint("cast the floats to the narrower type directly, or keep the wider type")
          << "Cast from " << data_type_name(integer_real->second) << " to " << data_type_name(static_cast<int>(to))
          << " wraps around in ONNX; the operand holds integers as reals (a Cast of floats), which presk does not wrap";
    }
    builder.define(0, x);
    builder.integer_reals[builder.node->output(0)] = static_cast<int>(to);
    return;
  }
  cast_float_to_integer(builder, x, to);
}

}  // namespace

std::optional<std::pair<int64_t, int64_t>> integer_range(int type) {
  static const std::map<int, std::pair<int64_t, int64_t>> ranges = {
      {onnx::TensorProto::INT64, {INT64_MIN, INT64_MAX}}, {onnx::TensorProto::INT32, {INT32_MIN, INT32_MAX}},
      {onnx::TensorProto::INT16, {INT16_MIN, INT16_MAX}}, {onnx::TensorProto::INT8, {INT8_MIN, INT8_MAX}},
      {onnx::TensorProto::UINT32, {0, UINT32_MAX}},       {onnx::TensorProto::UINT16, {0, UINT16_MAX}},
      {onnx::TensorProto::UINT8, {0, UINT8_MAX}}};
  auto it = ranges.find(type);
  if (it == ranges.end()) return std::nullopt;
  return it->second;
}

int integer_bits(int type) {
  auto range = integer_range(type);
  if (!range) return 63;
  int bits = 0;
  while (bits < 63 && (int64_t{1} << bits) <= range->second) ++bits;
  return bits;  // every value v of the type has −2^bits ≤ v < 2^bits
}

Value wrapped_into(Builder& builder, const Value& exact, int bits, int type, const std::string& suffix) {
  const auto [low, high] = *integer_range(type);
  const int width = integer_bits(type) + (low < 0 ? 1 : 0);  // b: the type's 2^b values
  const std::string v = operand(exact);
  // r = v + 2^bits for v < 0 (a multiple of 2^b: the same residue), in [0, 2^bits); the branch
  // not taken is computed too, so it adds to min(v, −1), which cannot overflow.
  std::string shifted = "min(" + exact.expr + ", -1) + " + std::to_string(int64_t{1} << (bits == 63 ? 62 : bits));
  if (bits == 63) shifted = "(" + shifted + ") + 4611686018427387904";  // 2^63 as two halves
  Value r = builder.emit("where(" + v + " < 0, " + shifted + ", " + exact.expr + ")", exact.shape,
                         Kind::Z, suffix + "_residue");
  for (int k = bits - 1; k >= width; --k) {  // subtract 2^k where it fits: r mod 2^b kept, r < 2^k after
    const std::string power = std::to_string(int64_t{1} << k);
    r = builder.emit("where(" + r.expr + " >= " + power + ", " + r.expr + " - " + power + ", " + r.expr + ")", exact.shape,
                     Kind::Z, suffix + "_" + std::to_string(k));
  }
  if (low == 0) return r;
  const std::string span = std::to_string(int64_t{1} << width);  // width ≤ 32: INT64 needs no wrap
  return builder.emit("where(" + r.expr + " > " + std::to_string(high) + ", " + r.expr + " - " + span + ", " + r.expr + ")",
                      exact.shape, Kind::Z, suffix);
}

const std::set<std::string>& integer_real_readers() {
  static const std::set<std::string> readers = {
      "Identity", "Reshape",  "Flatten",   "Squeeze",      "Unsqueeze",    "Transpose",   "Slice",   "Split",
      "Gather",   "Expand",   "Tile",      "Concat",       "Min",          "Max",         "Clip",    "Where",
      "ReduceMax", "ReduceMin", "Cast",    "Equal",        "Less",         "Greater",     "LessOrEqual", "GreaterOrEqual",
      "DequantizeLinear", "QuantizeLinear", "MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv",
      // selections and moves, exact on integers (a QOperator model's MaxPool between QLinearConvs)
      "MaxPool", "GlobalMaxPool", "DepthToSpace", "SpaceToDepth", "Pad", "GatherElements", "GatherND", "Dropout",
      "Trilu"};
  return readers;
}

void check_integer_reals(Builder& builder, const onnx::NodeProto& node) {
  static const std::set<std::string> any_operand = {"QuantizeLinear", "DequantizeLinear", "Concat", "Min", "Max", "Clip", "Where", "Equal", "Less", "Greater",
                                                    "LessOrEqual", "GreaterOrEqual", "MatMulInteger", "ConvInteger",
                                                    "QLinearMatMul", "QLinearConv"};
  for (int i = 0; i < node.input_size(); ++i) {
    auto it = builder.integer_reals.find(node.input(i));
    if (it == builder.integer_reals.end()) continue;
    const bool reads = integer_real_readers().count(node.op_type()) > 0 && (i == 0 || any_operand.count(node.op_type()) > 0);
    if (!reads) {
      builder.fail("E1356").hint("compute on the floats before the Cast (or dequantize the codes first), or cast them to a "
                                 "float type first")
          << "operand " << i << " (`" << printable(node.input(i)) << "`) holds " << data_type_name(it->second)
          << " integers as reals (a Cast of floats, or the codes of a quantizing operator: presk has no conversion "
          << "from reals to its integers); " << node.op_type() << " of it is not supported (supported: the layout "
          << "operators, Min, Max, Clip, Where, ReduceMax, ReduceMin, MaxPool, GlobalMaxPool, the comparisons, Cast, "
          << "QuantizeLinear, DequantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv)";
    }
  }
}

namespace {

// The integer type of operand `index` (a zero point): a constant's, the graph's, or that of the
// integers it holds as reals; `fallback` when absent or unstated.
int operand_type(const Builder& builder, const onnx::NodeProto& node, int index, int fallback) {
  if (index >= node.input_size() || node.input(index).empty()) return fallback;
  const Value* value = builder.find(node.input(index));
  if (value != nullptr && value->constant && !value->constant->is_float()) return value->constant->data_type;
  for (const auto* types : {&builder.integer_reals, &builder.element_types}) {
    auto it = types->find(node.input(index));
    if (it != types->end()) return it->second;
  }
  return fallback;
}

// The outputs of a quantizing operator that hold integer codes as reals, with their type:
// QuantizeLinear's and QLinear*'s (their zero point's type), DynamicQuantizeLinear's codes and
// zero point (UINT8), MatMulInteger's and ConvInteger's sums (INT32).
std::vector<std::pair<int, int>> written_codes(const Builder& builder, const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  if (op == "QuantizeLinear" && builder.stripped_quantize.count(node.output(0)) == 0) {
    return {{0, operand_type(builder, node, 2, onnx::TensorProto::UINT8)}};
  }
  if (op == "QLinearMatMul" || op == "QLinearConv") return {{0, operand_type(builder, node, 7, onnx::TensorProto::UINT8)}};
  if (op == "DynamicQuantizeLinear") return {{0, onnx::TensorProto::UINT8}, {2, onnx::TensorProto::UINT8}};
  if (op == "MatMulInteger" || op == "ConvInteger") return {{0, onnx::TensorProto::INT32}};
  return {};
}

}  // namespace

void mark_integer_reals(Builder& builder, const onnx::NodeProto& node) {
  static const std::set<std::string> ends = {"Cast", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                                             "DequantizeLinear", "QuantizeLinear", "QLinearMatMul", "QLinearConv",
                                             "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger"};
  for (const auto& [output, type] : written_codes(builder, node)) {
    const Value* value = output < node.output_size() ? builder.find(node.output(output)) : nullptr;
    if (value != nullptr && value->kind == Kind::R && !value->expr.empty()) builder.integer_reals[node.output(output)] = type;
  }
  if (ends.count(node.op_type()) > 0) return;
  int type = 0;
  for (const std::string& input : node.input()) {
    auto it = builder.integer_reals.find(input);
    if (it != builder.integer_reals.end()) type = it->second;
  }
  if (type == 0) return;
  for (const std::string& output : node.output()) {
    const Value* value = builder.find(output);
    if (!output.empty() && value != nullptr && value->kind == Kind::R) builder.integer_reals[output] = type;
  }
}

void add_cast_translators(std::map<std::string, Translator>& table) { table["Cast"] = translate_cast; }

}  // namespace presk::onnx_import
