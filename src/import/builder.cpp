// The import's working state: shapes as monomials of dims, names, operands, lets, parameters.
#include "import/builder.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "import/onnx_reader.h"
#include "ir/ir.h"

namespace presk::onnx_import {
namespace {

// Words a let, argument or path component must not be: the language's keywords and the
// names its builtins are called by.
const std::set<std::string>& reserved_words() {
  static const std::set<std::string> words = {
      "const", "dim", "module", "param", "fn", "let", "entry", "fold", "over", "stack", "precision",
      "budget", "R", "Z", "B", "p", "zeros", "ones", "normal", "uniform", "gelu", "einsum",
      "axis", "concat", "causal_mask", "dropout", "cross_entropy", "embed", "reshape",
      "transpose", "softmax", "log_softmax", "sum", "mean", "max", "min", "where", "erf"};
  return words;
}

bool is_reserved(const std::string& name) {
  return reserved_words().count(name) > 0 || ir::op_from_name(name).has_value();
}

}  // namespace

Extent times(const Extent& a, const Extent& b) {
  int64_t factor = 0;
  if (__builtin_mul_overflow(a.factor, b.factor, &factor) || factor > (int64_t{1} << 40)) {
    user_error("E1308") << "a tensor's extent exceeds 2^40 elements; the model is too large to import";
  }
  Extent result{factor, a.dims};
  result.dims.insert(result.dims.end(), b.dims.begin(), b.dims.end());
  std::sort(result.dims.begin(), result.dims.end());
  return result;
}

std::optional<Extent> divided(const Extent& a, const Extent& b) {
  if (b.factor == 0 || a.factor % b.factor != 0) return std::nullopt;
  std::vector<std::string> rest = a.dims;
  for (const std::string& dim : b.dims) {
    auto it = std::find(rest.begin(), rest.end(), dim);
    if (it == rest.end()) return std::nullopt;
    rest.erase(it);
  }
  return Extent{a.factor / b.factor, rest};
}

Extent product(const Shape& shape, size_t begin, size_t end) {
  Extent result;
  for (size_t i = begin; i < end && i < shape.size(); ++i) {
    result = times(result, shape[i]);
    // Extents are at most 2^40 (checked where made), so a product of a few stays exact
    // until it is refused here.
    if (result.factor > (int64_t{1} << 40)) {
      user_error("E1308") << "a tensor's extent exceeds 2^40 elements; the model is too large to import";
    }
  }
  return result;
}

std::string extent_text(const Extent& extent) {
  std::string text;
  if (extent.factor != 1 || extent.dims.empty()) text = std::to_string(extent.factor);
  for (const std::string& dim : extent.dims) text += (text.empty() ? "" : " * ") + dim;
  return text;
}

std::string shape_list(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i == 0 ? "" : ", ") + extent_text(shape[i]);
  return text + "]";
}

const std::vector<double>& Constant::values() const {
  if (values_) return *values_;
  if (!raw) {
    values_ = std::make_shared<std::vector<double>>();
  } else if (!raw->mapped) {
    values_ = std::make_shared<std::vector<double>>(decode_raw(raw->data_type, raw->bytes));
  } else {  // read through a guarded copy: the file may shrink under the mapping
    std::vector<std::byte> bytes(raw->bytes.size());
    copy_raw(*raw, 0, bytes.size(), bytes.data());
    values_ = std::make_shared<std::vector<double>>(decode_raw(raw->data_type, bytes));
  }
  return *values_;
}

std::vector<double>& Constant::mutable_values() {
  values();
  if (values_.use_count() > 1) values_ = std::make_shared<std::vector<double>>(*values_);
  raw.reset();
  return *values_;
}

size_t Constant::element_count() const {
  if (raw && !values_) return raw->bytes.size() / element_bytes(raw->data_type);
  return values().size();
}

bool Constant::is_float() const {
  return data_type == onnx::TensorProto::FLOAT || data_type == onnx::TensorProto::DOUBLE ||
         data_type == onnx::TensorProto::FLOAT16 || data_type == onnx::TensorProto::BFLOAT16;
}

std::vector<int64_t> Constant::integers() const {
  std::vector<int64_t> result;
  result.reserve(element_count());
  // Beyond ±2^62 (or NaN) no extent, axis or index is meant: clamped, the callers refuse them.
  constexpr double kLimit = 4611686018427387904.0;
  for (double value : values()) {
    result.push_back(std::isnan(value) ? INT64_MIN / 2 : static_cast<int64_t>(std::clamp(value, -kLimit, kLimit)));
  }
  return result;
}

SymInt Constant::element(size_t index) const {
  if (is_symbolic()) return symbols[index];
  constexpr double kLimit = 4611686018427387904.0;  // 2^62, as integers() clamps
  double value = values()[index];
  return SymInt::of(std::isnan(value) ? INT64_MIN / 2 : static_cast<int64_t>(std::clamp(value, -kLimit, kLimit)));
}

std::string sanitize(std::string_view name) {
  std::string result;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    result += ok ? c : '_';
  }
  // Leading and repeated underscores from separators (`/layer/MatMul`) read badly.
  std::string compact;
  for (char c : result) {
    if (c == '_' && (compact.empty() || compact.back() == '_')) continue;
    compact += c;
  }
  while (!compact.empty() && compact.back() == '_') compact.pop_back();
  if (compact.empty()) compact = "v";
  if (compact[0] >= '0' && compact[0] <= '9') compact = "n" + compact;
  if (compact.size() > 200) compact.resize(200);
  if (is_reserved(compact)) compact += "_";
  return compact;
}

Shape onnx_shape(const Value& value) {
  if (!value.constant || !value.shape.empty()) return value.shape;
  Shape shape;
  for (int64_t extent : value.constant->shape) shape.push_back(Extent{extent, {}});
  return shape;
}

std::string printable(std::string_view text) {
  std::string result;
  for (char c : text) result += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return result;
}

std::string operand(const Value& value) {
  if (!value.expr.empty() && value.expr[0] == '-') return "(" + value.expr + ")";
  return value.expr;
}

Shape broadcast_shapes(const Builder& builder, const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    Extent x = i + a.size() >= rank ? a[i + a.size() - rank] : Extent{};
    Extent y = i + b.size() >= rank ? b[i + b.size() - rank] : Extent{};
    if (x == y || y == Extent{}) {
      result[i] = x;
    } else if (x == Extent{}) {
      result[i] = y;
    } else {
      builder.fail("E1308") << "operand shapes " << shape_list(a) << " and " << shape_list(b)
                            << " do not broadcast (axis " << i << ": " << extent_text(x) << " vs "
                            << extent_text(y) << ")";
    }
  }
  return result;
}

int64_t known_extent(const Builder& builder, const Extent& extent, std::string_view role) {
  if (!extent.is_known()) {
    builder.fail("E1307").hint("bind the dimension with --dim NAME=N")
        << role << " has the symbolic extent " << extent_text(extent)
        << ", which this operator needs as a number";
  }
  return extent.factor;
}

std::string Builder::node_label() const {
  if (node == nullptr) return "the graph";
  return "node \"" + printable(node->name()) + "\" (" + printable(node->op_type()) + ")";
}

bool Builder::has_input(int index) const {
  return index >= 0 && index < node->input_size() && !node->input(index).empty();
}

size_t Builder::input_count() const { return static_cast<size_t>(node->input_size()); }

Value& Builder::raw_input(int index) {
  if (!has_input(index)) fail("E1309") << "operand " << index << " is missing";
  auto it = values_.find(node->input(index));
  if (it == values_.end()) {
    fail("E1309").hint("the nodes must be in topological order, as the ONNX checker requires")
        << "operand `" << printable(node->input(index)) << "` is not defined before this node";
  }
  return it->second;
}

const Value& Builder::input(int index) {
  Value& value = raw_input(index);
  if (value.expr.empty()) {
    Value made = materialize(*value.constant);
    value.expr = made.expr;
    value.shape = made.shape;
    value.kind = made.kind;
  }
  return value;
}

const Constant& Builder::constant_input(int index, std::string_view role) {
  const Value& value = raw_input(index);
  if (!value.constant) {
    fail("E1305").hint("fold the shape computation into a constant before exporting (onnx-simplifier)")
        << role << " (operand " << index << ", `" << node->input(index)
        << "`) is computed at run time; presk needs it as an initializer or Constant";
  }
  if (value.constant->is_symbolic()) {
    fail("E1307").hint("bind the dimension with --dim NAME=N")
        << role << " (operand " << index << ", `" << printable(node->input(index)) << "`) is symbolic, "
        << value.constant->symbols[0].text() << (value.constant->symbols.size() > 1 ? ", …" : "")
        << "; this operator needs it as a number";
  }
  return *value.constant;
}

std::vector<SymInt> Builder::symbolic_input(int index, std::string_view role) {
  const Value& value = raw_input(index);
  if (!value.constant) {
    fail("E1305").hint("fold the shape computation into a constant before exporting (onnx-simplifier)")
        << role << " (operand " << index << ", `" << printable(node->input(index))
        << "`) is computed from run-time data; presk needs it known at import (a constant, or "
           "shape arithmetic on the inputs' extents)";
  }
  std::vector<SymInt> elements;
  for (size_t i = 0; i < value.constant->element_count(); ++i) elements.push_back(value.constant->element(i));
  return elements;
}

const onnx::AttributeProto* Builder::attribute(std::string_view name) const {
  for (const onnx::AttributeProto& attribute : node->attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t Builder::int_attribute(std::string_view name, int64_t fallback) const {
  const onnx::AttributeProto* found = attribute(name);
  if (found == nullptr) return fallback;
  if (found->type() != onnx::AttributeProto::INT) fail("E1303") << "attribute " << name << " is not an integer";
  return found->i();
}

float Builder::float_attribute(std::string_view name, float fallback) const {
  const onnx::AttributeProto* found = attribute(name);
  if (found == nullptr) return fallback;
  if (found->type() != onnx::AttributeProto::FLOAT) fail("E1303") << "attribute " << name << " is not a float";
  if (!std::isfinite(found->f())) {  // a literal of a program over the reals is a number
    fail("E1360").hint("give the attribute a finite value (a bound of ±FLT_MAX stands for none)")
        << "attribute " << name << " is " << (std::isnan(found->f()) ? "NaN" : found->f() > 0 ? "+inf" : "-inf") << "; presk reads float attributes only as finite numbers";
  }
  return found->f();
}

std::string Builder::string_attribute(std::string_view name, std::string fallback) const {
  const onnx::AttributeProto* found = attribute(name);
  if (found == nullptr) return fallback;
  if (found->type() != onnx::AttributeProto::STRING) fail("E1303") << "attribute " << name << " is not a string";
  return found->s();
}

std::optional<std::vector<int64_t>> Builder::ints_attribute(std::string_view name) const {
  const onnx::AttributeProto* found = attribute(name);
  if (found == nullptr) return std::nullopt;
  if (found->type() != onnx::AttributeProto::INTS) fail("E1303") << "attribute " << name << " is not a list of integers";
  return std::vector<int64_t>(found->ints().begin(), found->ints().end());
}

void Builder::accept_attributes(std::initializer_list<std::string_view> known) const {
  for (const onnx::AttributeProto& attribute : node->attribute()) {
    if (std::find(known.begin(), known.end(), attribute.name()) != known.end()) continue;
    std::string list;
    for (std::string_view name : known) list += (list.empty() ? "" : ", ") + std::string(name);
    fail("E1303") << "attribute `" << attribute.name() << "` is not supported (supported: "
                  << (list.empty() ? "none" : list) << ")";
  }
}

int64_t Builder::normalize_axis(int64_t axis, size_t rank, std::string_view role) const {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    fail("E1303") << role << " " << axis << " is outside [" << -r << ", " << r << ") for rank " << rank;
  }
  return axis < 0 ? axis + r : axis;
}

std::string Builder::fresh_name(const std::string& wanted) {
  std::string base = sanitize(wanted);
  std::string name = base;
  for (int k = 2; names_in_use.count(name) > 0; ++k) name = base + "_" + std::to_string(k);
  names_in_use.insert(name);
  return name;
}

Value Builder::emit(const std::string& expr, Shape shape, Kind kind, const std::string& suffix) {
  check_element_count(*this, shape, "the node's result");
  std::string wanted = node->name();
  if (wanted.empty()) wanted = node->output_size() > 0 && !node->output(0).empty() ? node->output(0) : node->op_type();
  LetLine line{fresh_name(wanted + suffix), expr, node_label(), {}};
  // The lets the expression reads: identifiers not after a `.` that name an earlier let.
  for (size_t i = 0; i < expr.size();) {
    bool starts = (std::isalpha(static_cast<unsigned char>(expr[i])) || expr[i] == '_') &&
                  (i == 0 || expr[i - 1] != '.');
    size_t j = i;
    while (j < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[j])) || expr[j] == '_')) ++j;
    if (j == i) j = i + 1;
    if (starts) line.uses.insert(expr.substr(i, j - i));
    i = j;
  }
  lets.push_back(line);
  return Value{line.name, std::move(shape), kind, nullptr};
}

void Builder::define(int output, Value value) {
  if (output >= node->output_size() || node->output(output).empty()) return;  // an unused output
  define_value(node->output(output), std::move(value));
}

void Builder::define_value(const std::string& onnx_name, Value value) {
  values_[onnx_name] = std::move(value);
}

const Value* Builder::find(const std::string& onnx_name) const {
  auto it = values_.find(onnx_name);
  return it == values_.end() ? nullptr : &it->second;
}

Value Builder::materialize(const Constant& constant, bool as_parameter) {
  bool single = constant.element_count() == 1;
  if (constant.is_symbolic() && single && constant.is_float()) {  // a float from shape arithmetic
    SymInt element = constant.symbols[0];
    return Value{element.extent() && element.extent()->dims.size() == 1 && element.extent()->factor == 1
                     ? element.text() : "(" + element.text() + ")", {}, Kind::R, nullptr};
  }
  if (constant.is_symbolic() && !constant.is_bool()) {
    fail("E1315").hint("presk computes with a dim only as a real scalar: Cast the single value to a float type")
        << "the shape value `" << printable(constant.onnx_name) << "` (" << constant.symbols[0].text()
        << (single ? "" : ", …") << ") is used as data";
  }
  // 8-bit integers (quantization codes, their zero points and Clip bounds) are data: reals.
  const bool byte = constant.data_type == onnx::TensorProto::INT8 || constant.data_type == onnx::TensorProto::UINT8;
  if ((constant.is_float() || byte) && single && std::isfinite(constant.values()[0]) && !as_parameter) {
    return Value{ir::real_to_string(constant.values()[0]), {}, Kind::R, nullptr};
  }
  if (!constant.is_float() && !constant.is_bool() && !byte) {  // 8-bit codes are data: reals
    fail("E1304") << "the integer constant `" << constant.onnx_name
                  << "` is used as data; presk reads integer constants only as shapes, axes and "
                     "Gather indices (and booleans as masks)";
  }
  // A parameter at the path of its ONNX name; `.` and `/` separate modules.
  std::vector<std::string> path;
  std::string component;
  for (char c : constant.onnx_name + ".") {
    if (c == '.' || c == '/') {
      if (!component.empty()) path.push_back(sanitize(component));
      component.clear();
    } else {
      component += c;
    }
  }
  if (path.empty()) path.push_back("c");
  std::string last = path.back();
  for (int k = 2;; ++k) {
    bool clash = param_paths_.count(path) > 0;
    for (const std::vector<std::string>& other : param_paths_) {  // a leaf where a module is
      bool prefix = other.size() != path.size() &&
                    std::equal(path.begin(), path.begin() + std::min(path.size(), other.size()), other.begin());
      clash = clash || prefix;
    }
    if (!clash) break;
    path.back() = last + "_" + std::to_string(k);
  }
  param_paths_.insert(path);
  params.push_back({path, constant.onnx_name, std::make_shared<Constant>(constant)});
  std::string reference = "p";
  for (const std::string& part : path) reference += "." + part;
  Shape shape;
  for (int64_t extent : constant.shape) shape.push_back(Extent{extent, {}});
  if (constant.is_bool()) return emit(reference + " != 0", shape, Kind::B, "_mask");
  return Value{reference, shape, Kind::R, nullptr};
}

Value tensor_input(Builder& builder, int index) {
  Value value = builder.input(index);
  Shape shape = onnx_shape(value);
  return shape == value.shape ? value : reshaped(builder, value, shape, "_operand");
}

Value reshaped(Builder& builder, const Value& value, const Shape& shape, const std::string& suffix) {
  if (value.shape == shape) return value;
  return builder.emit("reshape(" + value.expr + ", " + shape_list(shape) + ")", shape, value.kind, suffix);
}

const Value& real_input(Builder& builder, int index) {
  const Value& value = builder.input(index);
  if (value.kind != Kind::R) {
    builder.fail("E1304").hint("presk imports arithmetic on float tensors (FLOAT, DOUBLE, FLOAT16, BFLOAT16)")
        << "operand " << index << " must be a float tensor";
  }
  return value;
}

Value number_input(Builder& builder, int index, Kind kind) {
  const Value& raw = builder.raw_input(index);
  if (kind == Kind::Z && raw.expr.empty() && raw.constant && raw.constant->element_count() == 1 &&
      !raw.constant->is_float() && !raw.constant->is_bool() && !raw.constant->is_symbolic()) {
    int64_t v = raw.constant->integers()[0];
    if (v == INT64_MIN) builder.fail("E1304") << "the integer constant " << v << " is beyond what presk writes";
    return Value{std::to_string(v), {}, Kind::Z, raw.constant};
  }
  const Value& value = builder.input(index);
  if (value.kind != kind) {
    builder.fail("E1304").hint("presk imports these operators on float tensors, or on integer tensors all alike")
        << "operand " << index << " must be " << (kind == Kind::Z ? "an integer" : "a float") << " tensor, as operand 0 is";
  }
  return value;
}

void check_element_count(const Builder& builder, const Shape& shape, std::string_view what) {
  constexpr int64_t kLimit = int64_t{1} << 40;  // the language's own limit (E0310)
  int64_t count = 1;
  for (const Extent& extent : shape) {
    if (extent.factor > 0 && count > kLimit / extent.factor) count = kLimit + 1;
    else count *= std::max<int64_t>(extent.factor, 1);
  }
  if (count <= kLimit) return;
  auto error = builder.node != nullptr ? builder.fail("E1316") : NodeError("E1316", "the model");
  error.hint("check the model's shapes (onnx.checker.check_model with full_check=True)")
      << what << " " << shape_list(shape) << " has more than 2^40 elements, more than presk holds";
}

}  // namespace presk::onnx_import
