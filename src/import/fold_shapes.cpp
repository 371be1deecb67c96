// Shape arithmetic at import: a node whose operands are all known at import (constants, and
// values computed from the inputs' extents by Shape) is evaluated here, its integers as
// expressions of the dims, so that `Shape → Gather → Unsqueeze → Concat → Reshape` of a
// dynamic-axes export reshapes to extents written with the dims (docs/import.md, "Shape
// arithmetic"). Unsqueeze, Squeeze, Reshape, Flatten, Identity and Cast of constants fold in
// their translators (translate_layout.cpp); Shape itself is translate_shape.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>

#include "import/builder.h"
#include "import/onnx_reader.h"

namespace presk::onnx_import {
namespace {

constexpr size_t kFloatFoldLimit = 64;          // a float constant larger than this is moved at run time
constexpr int64_t kMaxFolded = int64_t{1} << 22;  // elements of an import-time result

using Extents = std::vector<int64_t>;

// The element count, INT64_MAX when it overflows (callers refuse counts past kMaxFolded).
int64_t count_of(const Extents& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    if (extent < 0 || __builtin_mul_overflow(count, extent, &count)) return INT64_MAX;
  }
  return count;
}

// The node's operands, every one a constant not yet materialized; nullopt when one is not.
std::optional<std::vector<const Constant*>> constant_operands(Builder& builder) {
  std::vector<const Constant*> operands;
  for (size_t i = 0; i < builder.input_count(); ++i) {
    if (!builder.has_input(static_cast<int>(i))) {
      operands.push_back(nullptr);
      continue;
    }
    const Value& value = builder.raw_input(static_cast<int>(i));
    if (!value.constant || !value.expr.empty()) return std::nullopt;
    if (value.constant->is_float() && value.constant->element_count() > kFloatFoldLimit) return std::nullopt;
    operands.push_back(value.constant.get());
  }
  return operands;
}

// A result: `symbols` dropped when every element is known, NaN values where symbolic.
void define_result(Builder& builder, Constant result, int output = 0) {
  bool symbolic = std::any_of(result.symbols.begin(), result.symbols.end(), [](const SymInt& s) { return !s.is_known(); });
  if (!result.symbols.empty()) {
    std::vector<double>& values = result.mutable_values();
    values.resize(result.symbols.size());
    for (size_t i = 0; i < result.symbols.size(); ++i) {
      values[i] = result.symbols[i].is_known() ? static_cast<double>(result.symbols[i].value()) : NAN;
    }
  }
  if (!symbolic) result.symbols.clear();
  result.onnx_name = builder.node->output(output);
  builder.define(output, Value{"", {}, Kind::R, std::make_shared<Constant>(std::move(result))});
}

// A result made of elements of the operands: element i is `sources[picks[i].first]`'s
// element `picks[i].second` (values and symbols alike).
Constant picked(const std::vector<const Constant*>& sources, const Extents& shape,
                const std::vector<std::pair<size_t, size_t>>& picks) {
  Constant result;
  result.shape = shape;
  result.data_type = sources[picks.empty() ? 0 : picks[0].first]->data_type;
  bool symbolic = std::any_of(sources.begin(), sources.end(), [](const Constant* c) { return c && c->is_symbolic(); });
  for (const auto& [source, index] : picks) {
    result.mutable_values().push_back(sources[source]->values()[index]);
    if (symbolic) result.symbols.push_back(sources[source]->element(index));
  }
  return result;
}

// numpy broadcasting of the operands' shapes (E1308 when they do not broadcast).
Extents broadcast(const Builder& builder, const std::vector<const Constant*>& operands) {
  Extents result;
  for (const Constant* operand : operands) {
    const Extents& shape = operand->shape;
    if (shape.size() > result.size()) result.insert(result.begin(), shape.size() - result.size(), 1);
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t& slot = result[result.size() - shape.size() + i];
      if (slot == 1) slot = shape[i];
      else if (shape[i] != 1 && shape[i] != slot) builder.fail("E1308") << "the operands' shapes do not broadcast";
    }
  }
  if (count_of(result) > kMaxFolded) builder.fail("E1308") << "the shape computation's result is too large";
  return result;
}

// The flat index into `shape` (aligned right, size-1 axes stretched) of flat index `i` of `out`.
size_t source_index(const Extents& out, const Extents& shape, int64_t i) {
  size_t index = 0, stride = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    size_t axis_out = out.size() - 1 - k, axis = shape.size() - 1 - k;
    int64_t coordinate = i % out[axis_out];
    i /= out[axis_out];
    if (shape[axis] != 1) index += coordinate * stride;
    stride *= shape[axis];
  }
  return index;
}

std::string pair_text(const SymInt& a, const SymInt& b) { return a.text() + " and " + b.text(); }

// A known integer result of a type narrower than INT64 must lie in its range: ONNX wraps it
// around, which presk's exact integers do not (E1340).
void check_range(const Builder& builder, const SymInt& value, int type) {
  static const std::map<int, std::pair<int64_t, int64_t>> ranges = {
      {onnx::TensorProto::INT32, {INT32_MIN, INT32_MAX}}, {onnx::TensorProto::INT16, {INT16_MIN, INT16_MAX}},
      {onnx::TensorProto::INT8, {INT8_MIN, INT8_MAX}},    {onnx::TensorProto::UINT32, {0, UINT32_MAX}},
      {onnx::TensorProto::UINT16, {0, UINT16_MAX}},       {onnx::TensorProto::UINT8, {0, UINT8_MAX}}};
  auto range = ranges.find(type);
  if (range == ranges.end() || !value.is_known()) return;
  if (value.value() < range->second.first || value.value() > range->second.second) {
    builder.fail("E1340").hint("compute in INT64, or make sure the values stay in the type's range")
        << "the integer result " << value.value() << " is outside the range of " << data_type_name(type)
        << ", where ONNX wraps it around; presk's integers are exact";
  }
}

// Integer arithmetic, comparisons and logic, elementwise with broadcasting.
template <typename Function>
void fold_elementwise(Builder& builder, const std::vector<const Constant*>& operands, int result_type, Function function) {
  Extents shape = broadcast(builder, operands);
  Constant result;
  result.shape = shape;
  result.data_type = result_type;
  for (int64_t i = 0; i < count_of(shape); ++i) {
    std::vector<SymInt> elements;
    for (const Constant* operand : operands) elements.push_back(operand->element(source_index(shape, operand->shape, i)));
    result.symbols.push_back(function(elements));
    check_range(builder, result.symbols.back(), result_type);
  }
  define_result(builder, std::move(result));
}

int sign_of(Builder& builder, const SymInt& a, const SymInt& b) {
  std::optional<int> sign = compare(a, b);
  if (!sign) {
    builder.fail("E1313").hint("bind the dims it depends on with --dim NAME=N")
        << "comparing " << pair_text(a, b) << " depends on the values of the dims";
  }
  return *sign;
}

bool fold_arithmetic(Builder& builder, const std::string& op, const std::vector<const Constant*>& operands) {
  for (const Constant* operand : operands) {
    if (operand == nullptr || operand->is_float()) return false;  // floats compute at run time
  }
  int type = operands[0]->data_type;
  auto quotient = [&builder](const SymInt& a, const SymInt& b) {
    std::optional<SymInt> q = exact_quotient(a, b);
    if (!q) {
      builder.fail("E1313").hint("bind the dims it depends on with --dim NAME=N")
          << a.text() << " / " << b.text() << " is not exact for every value of the dims (or divides by 0)";
    }
    return *q;
  };
  using Elements = const std::vector<SymInt>&;
  if (op == "Add") fold_elementwise(builder, operands, type, [](Elements e) { return e[0] + e[1]; });
  else if (op == "Sub") fold_elementwise(builder, operands, type, [](Elements e) { return e[0] - e[1]; });
  else if (op == "Mul") fold_elementwise(builder, operands, type, [](Elements e) { return e[0] * e[1]; });
  else if (op == "Neg") fold_elementwise(builder, operands, type, [](Elements e) { return SymInt::of(0) - e[0]; });
  else if (op == "Div") fold_elementwise(builder, operands, type, [&](Elements e) { return quotient(e[0], e[1]); });
  else if (op == "Mod") {
    const bool fmod = builder.int_attribute("fmod", 0) != 0;
    fold_elementwise(builder, operands, type, [&](Elements e) {
      if (!e[0].is_known() || !e[1].is_known() || e[1].value() == 0) {  // a multiple of a known divisor is 0
        std::optional<SymInt> q = exact_quotient(e[0], e[1]);
        if (q && !e[1].is_known()) q.reset();
        if (!q) builder.fail("E1313").hint("bind the dims it depends on with --dim NAME=N") << e[0].text() << " mod " << e[1].text() << " depends on the values of the dims";
        return SymInt::of(0);
      }
      int64_t a = e[0].value(), b = e[1].value(), r = b == -1 ? 0 : a % b;
      if (fmod) return SymInt::of(r);  // fmod=1: C's fmod, the sign of the dividend
      return SymInt::of(r != 0 && ((r < 0) != (b < 0)) ? r + b : r);  // the sign of the divisor
    });
  } else if (op == "Min" || op == "Max") {
    bool max = op == "Max";
    fold_elementwise(builder, operands, type, [&](Elements e) {
      SymInt best = e[0];
      for (const SymInt& x : e) {
        if (max ? at_least(best, x) : at_least(x, best)) continue;
        if (!(max ? at_least(x, best) : at_least(best, x))) {
          builder.fail("E1313").hint("bind the dims it depends on with --dim NAME=N")
              << op << " of " << pair_text(x, best) << " depends on the values of the dims";
        }
        best = x;
      }
      return best;
    });
  } else if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual") {
    fold_elementwise(builder, operands, onnx::TensorProto::BOOL, [&](Elements e) {
      int sign = sign_of(builder, e[0], e[1]);
      bool truth = op == "Equal" ? sign == 0 : op == "Less" ? sign < 0 : op == "Greater" ? sign > 0
                 : op == "LessOrEqual" ? sign <= 0 : sign >= 0;
      return SymInt::of(truth ? 1 : 0);
    });
  } else if (op == "Not") {
    fold_elementwise(builder, operands, type, [](Elements e) { return SymInt::of(e[0] == SymInt::of(0) ? 1 : 0); });
  } else if (op == "And" || op == "Or" || op == "Xor") {
    fold_elementwise(builder, operands, type, [&](Elements e) {
      bool a = !(e[0] == SymInt::of(0)), b = !(e[1] == SymInt::of(0));
      return SymInt::of(op == "And" ? a && b : op == "Or" ? a || b : a != b);
    });
  } else {
    return false;
  }
  return true;
}

// Gather of a constant by constant indices along `axis` (any ranks).
void fold_gather(Builder& builder, const Constant& data, const Constant& indices) {
  int64_t axis = builder.normalize_axis(builder.int_attribute("axis", 0), data.shape.size(), "axis");
  int64_t extent = data.shape[axis];
  int64_t outer = count_of(Extents(data.shape.begin(), data.shape.begin() + axis));
  int64_t inner = count_of(Extents(data.shape.begin() + axis + 1, data.shape.end()));
  Extents shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  if (count_of(shape) > kMaxFolded) builder.fail("E1308") << "the gathered constant is too large";
  std::vector<std::pair<size_t, size_t>> picks;
  std::vector<int64_t> positions = builder.constant_input(1, "the indices").integers();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t index : positions) {
      if (index < -extent || index >= extent) builder.fail("E1303") << "index " << index << " is outside an axis of extent " << extent;
      int64_t position = index < 0 ? index + extent : index;
      for (int64_t i = 0; i < inner; ++i) picks.emplace_back(0, (o * extent + position) * inner + i);
    }
  }
  define_result(builder, picked({&data}, shape, picks));
}

void fold_concat(Builder& builder, const std::vector<const Constant*>& parts) {
  Extents shape = parts[0]->shape;
  int64_t axis = builder.normalize_axis(builder.int_attribute("axis", 0), shape.size(), "axis");
  shape[axis] = 0;
  for (const Constant* part : parts) {
    Extents other = part->shape;
    if (other.size() != shape.size()) builder.fail("E1308") << "the operands of Concat differ in rank";
    shape[axis] += other[axis];
    other[axis] = shape[axis];
    if (other != shape) builder.fail("E1308") << "the operands of Concat differ off the concatenated axis";
  }
  int64_t outer = count_of(Extents(shape.begin(), shape.begin() + axis));
  int64_t inner = count_of(Extents(shape.begin() + axis + 1, shape.end()));
  std::vector<std::pair<size_t, size_t>> picks;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t p = 0; p < parts.size(); ++p) {
      int64_t block = parts[p]->shape[axis] * inner;
      for (int64_t i = 0; i < block; ++i) picks.emplace_back(p, o * block + i);
    }
  }
  define_result(builder, picked(parts, shape, picks));
}

// The starts/ends/axes/steps of a Slice: attributes before opset 10, operands from 10.
std::vector<int64_t> slice_list(Builder& builder, int index, const char* attribute) {
  if (builder.opset < 10) return builder.ints_attribute(attribute).value_or(std::vector<int64_t>{});
  if (!builder.has_input(index)) return {};
  return builder.constant_input(index, attribute).integers();
}

// Slice of a constant with known bounds, any step (ONNX's clamping).
bool fold_slice(Builder& builder, const Constant& data) {
  for (int i = 1; i < 3; ++i) {
    if (builder.opset >= 10 && builder.has_input(i) && builder.raw_input(i).constant->is_symbolic()) return false;
  }
  std::vector<int64_t> starts = slice_list(builder, 1, "starts"), ends = slice_list(builder, 2, "ends");
  std::vector<int64_t> axes = slice_list(builder, 3, "axes"), steps = builder.opset < 10 ? std::vector<int64_t>{} : slice_list(builder, 4, "steps");
  size_t rank = data.shape.size();
  if (axes.empty()) for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    builder.fail("E1303") << "starts, ends, axes and steps differ in length";
  }
  Extents first(rank, 0), step(rank, 1), shape = data.shape;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = builder.normalize_axis(axes[i], rank, "axis"), extent = data.shape[axis];
    if (steps[i] == 0 || steps[i] == INT64_MIN) builder.fail("E1303") << "a Slice step is 0 or out of range";
    if (extent == 0) {
      shape[axis] = 0;
      continue;
    }
    auto position = [extent](int64_t p, int64_t low, int64_t high) { return std::clamp(p < 0 ? p + extent : p, low, high); };
    int64_t start = steps[i] > 0 ? position(starts[i], 0, extent) : position(starts[i], 0, extent - 1);
    int64_t end = steps[i] > 0 ? position(ends[i], 0, extent) : position(ends[i], -1, extent - 1);
    int64_t span = steps[i] > 0 ? end - start : start - end, magnitude = std::abs(steps[i]);
    first[axis] = start;
    step[axis] = steps[i];
    shape[axis] = span <= 0 ? 0 : (span - 1) / magnitude + 1;
  }
  std::vector<std::pair<size_t, size_t>> picks;
  for (int64_t i = 0; i < count_of(shape); ++i) {
    int64_t rest = i, index = 0, stride = 1;
    for (size_t k = rank; k-- > 0;) {
      index += (first[k] + (rest % shape[k]) * step[k]) * stride;
      rest /= shape[k];
      stride *= data.shape[k];
    }
    picks.emplace_back(0, index);
  }
  define_result(builder, picked({&data}, shape, picks));
  return true;
}

// Expand (ONNX's bidirectional broadcast) and Where: elements picked by broadcasting.
bool fold_broadcast_pick(Builder& builder, const std::string& op, const std::vector<const Constant*>& operands) {
  if (op == "Expand") {
    std::vector<SymInt> wanted = builder.symbolic_input(1, "the shape");
    Constant target;
    for (const SymInt& extent : wanted) {
      if (!extent.is_known()) return false;  // a run-time tensor of symbolic extent
      target.shape.push_back(extent.value());
    }
    if (count_of(target.shape) > kMaxFolded) builder.fail("E1308") << "the expanded constant is too large";
    Extents shape = broadcast(builder, {operands[0], &target});
    std::vector<std::pair<size_t, size_t>> picks;
    for (int64_t i = 0; i < count_of(shape); ++i) picks.emplace_back(0, source_index(shape, operands[0]->shape, i));
    define_result(builder, picked({operands[0]}, shape, picks));
    return true;
  }
  if (!operands[0]->is_bool()) builder.fail("E1304") << "the condition (operand 0) must be BOOL";
  Extents shape = broadcast(builder, operands);
  std::vector<std::pair<size_t, size_t>> picks;
  for (int64_t i = 0; i < count_of(shape); ++i) {
    bool truth = operands[0]->values()[source_index(shape, operands[0]->shape, i)] != 0;
    size_t from = truth ? 1 : 2;
    picks.emplace_back(from - 1, source_index(shape, operands[from]->shape, i));
  }
  Constant result = picked({operands[1], operands[2]}, shape, picks);
  result.data_type = operands[1]->data_type;
  define_result(builder, std::move(result));
  return true;
}

// Range(start, limit, delta) over a symbolic extent (torch.arange(T)): the count ⌈(limit − start)
// / delta⌉ must be a product of dims and numbers; the values `iota([count]) * delta + start`,
// computed at run time (Z for an integer Range, R for a float one).
void range_at_run_time(Builder& builder, const std::vector<const Constant*>& operands) {
  SymInt start = operands[0]->element(0), limit = operands[1]->element(0), delta = operands[2]->element(0);
  for (const Constant* known : {operands[0], operands[2]}) {
    if (!known->is_symbolic() && known->values()[0] != std::trunc(known->values()[0])) {
      builder.fail("E1314").hint("bind the dims with --dim NAME=N")
          << "Range over a symbolic extent with the fractional start or step " << known->values()[0]
          << " makes positions that presk does not build";
    }
  }
  if (!start.is_known() || !delta.is_known()) {
    builder.fail("E1314").hint("bind the dims with --dim NAME=N")
        << "Range with the symbolic start or step " << (start.is_known() ? delta : start).text()
        << " makes positions that presk does not build";
  }
  if (delta.value() == 0) builder.fail("E1303") << "Range's delta is 0";
  SymInt span = delta.value() > 0 ? limit - start : start - limit;
  SymInt step = SymInt::of(delta.value() > 0 ? delta.value() : -delta.value());
  std::optional<SymInt> count = exact_quotient(span, step);  // else ⌈span / step⌉ = ⌊(span + step − 1) / step⌋
  if (!count) count = exact_quotient(span + step - SymInt::of(1), step);
  std::optional<Extent> extent = count ? count->extent() : std::nullopt;
  if (!extent) {
    builder.fail("E1313").hint("presk's extents are products of dims and numbers; bind a dim with --dim NAME=N")
        << "Range from " << start.text() << " to " << limit.text() << " by " << delta.value()
        << " has the extent ceil((" << span.text() << ") / " << step.text() << "), which is not a product of dims";
  }
  Shape shape = {*extent};
  check_element_count(builder, shape, "Range's result");
  bool integer = !operands[0]->is_float();
  std::string expr = "iota([" + extent_text(*extent) + "])";
  if (delta.value() != 1) expr += " * " + std::to_string(delta.value());
  if (start.value() != 0) expr += (start.value() > 0 ? " + " : " - ") + std::to_string(std::llabs(start.value()));
  if (!integer) expr += " + 0.0";
  builder.define(0, builder.emit(expr, shape, integer ? Kind::Z : Kind::R));
  if (integer) builder.element_types[builder.node->output(0)] = operands[0]->data_type;  // Add/Sub wrap at it
}

// Range(start, limit, delta) of known scalars; over a symbolic limit, range_at_run_time.
void fold_range(Builder& builder, const std::vector<const Constant*>& operands) {
  for (int i = 0; i < 3; ++i) {
    if (operands[i] == nullptr || operands[i]->element_count() != 1) builder.fail("E1303") << "Range takes three scalars";
  }
  if (operands[0]->is_symbolic() || operands[1]->is_symbolic() || operands[2]->is_symbolic()) {
    return range_at_run_time(builder, operands);
  }
  double start = operands[0]->values()[0], limit = operands[1]->values()[0], delta = operands[2]->values()[0];
  double count = delta == 0 ? -1 : std::ceil((limit - start) / delta);
  if (!(count >= 0 && count <= static_cast<double>(kMaxFolded))) builder.fail("E1303") << "Range's delta is 0 or its result too large";
  Constant result;
  result.data_type = operands[0]->data_type;
  result.shape = {static_cast<int64_t>(count)};
  for (int64_t i = 0; i < result.shape[0]; ++i) result.mutable_values().push_back(start + static_cast<double>(i) * delta);
  define_result(builder, std::move(result));
}

void fold_constant_of_shape(Builder& builder) {
  std::vector<SymInt> wanted = builder.symbolic_input(0, "the shape");
  Constant result;
  for (const SymInt& extent : wanted) {
    if (!extent.is_known()) {
      builder.fail("E1314").hint("bind the dim with --dim NAME=N")
          << "ConstantOfShape of the symbolic shape with extent " << extent.text()
          << " makes a run-time tensor, which presk does not build from a shape alone";
    }
    if (extent.value() < 0) builder.fail("E1303") << "the shape has a negative extent";
    result.shape.push_back(extent.value());
  }
  if (count_of(result.shape) > kMaxFolded) builder.fail("E1308") << "the constant is too large";
  double fill = 0;
  result.data_type = onnx::TensorProto::FLOAT;
  if (const onnx::AttributeProto* value = builder.attribute("value")) {
    std::shared_ptr<Constant> given = decode_tensor(value->t(), builder.node_label(), builder.tensor_source);
    if (given->element_count() != 1) builder.fail("E1303") << "the value must hold one element";
    fill = given->values()[0];
    result.data_type = given->data_type;
  }
  result.mutable_values().assign(count_of(result.shape), fill);
  define_result(builder, std::move(result));
}

}  // namespace

const std::set<std::string>& import_time_operators() {
  static const std::set<std::string> names = {
      "Add", "Sub", "Mul", "Div", "Mod", "Neg", "Min", "Max", "Equal", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "Not", "And", "Or", "Xor", "Gather", "Concat", "Slice", "Expand", "Where", "Range",
      "ConstantOfShape"};
  return names;
}

bool fold_node(Builder& builder) {
  const std::string& op = builder.node->op_type();
  if (import_time_operators().count(op) == 0) return false;
  if (op == "ConstantOfShape") {
    if (!builder.has_input(0) || !builder.raw_input(0).constant) return false;
    fold_constant_of_shape(builder);
    return true;
  }
  std::optional<std::vector<const Constant*>> operands = constant_operands(builder);
  if (!operands || operands->empty() || (*operands)[0] == nullptr) return false;
  if (op == "Gather") {
    if (operands->size() < 2 || (*operands)[1] == nullptr) return false;
    fold_gather(builder, *(*operands)[0], *(*operands)[1]);
    return true;
  }
  if (op == "Concat") {
    if (std::find(operands->begin(), operands->end(), nullptr) != operands->end()) return false;
    fold_concat(builder, *operands);
    return true;
  }
  if (op == "Slice") return fold_slice(builder, *(*operands)[0]);
  if (op == "Range") return fold_range(builder, *operands), true;
  if (op == "Expand" || op == "Where") {
    if (operands->size() < (op == "Where" ? 3u : 2u) || std::find(operands->begin(), operands->end(), nullptr) != operands->end()) return false;
    return fold_broadcast_pick(builder, op, *operands);
  }
  return fold_arithmetic(builder, op, *operands);
}

}  // namespace presk::onnx_import
