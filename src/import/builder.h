// The import's working state: the ONNX values known so far (as presk expressions with
// symbolic shapes, or as constants known at import), the lets emitted, the parameters made.
// The translators (translate_*.cpp) read a node's operands from it and define its outputs.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "import/onnx_import.h"
#include "import/symbolic.h"
#include "support/diagnostics.h"

namespace presk::onnx_import {

// One extent of a shape: factor × the product of the named dims (sorted), e.g. 2 · B · T.
struct Extent {
  int64_t factor = 1;
  std::vector<std::string> dims;
  bool is_known() const { return dims.empty(); }
  bool operator==(const Extent& other) const = default;
};
using Shape = std::vector<Extent>;

Extent times(const Extent& a, const Extent& b);
// a / b when b divides a exactly (as monomials), else nullopt.
std::optional<Extent> divided(const Extent& a, const Extent& b);
Extent product(const Shape& shape, size_t begin, size_t end);
std::string extent_text(const Extent& extent);  // "B", "4", "2 * B * T"
std::string shape_list(const Shape& shape);     // "[B, 4]"

enum class Kind : uint8_t { R, Z, B };

// The bytes of an initializer as the model stores them (little-endian, its ONNX data type),
// left where they lie: in the model's protobuf or in a memory-mapped external data file.
// `keep` holds that storage alive; `mapped` says it is a file mapping, whose pages a reader may
// hand back once read (release_pages).
struct RawBytes {
  std::span<const std::byte> bytes;
  int data_type = 0;  // of the bytes: a constant copied under another type keeps them as stored
  std::shared_ptr<const void> keep;
  bool mapped = false;
};
// Where a TensorProto's bytes may stay undecoded: the model (kept alive while a constant holds
// its bytes) and its external data files. Without a model a tensor is decoded at once.
class ExternalData;
struct TensorSource {
  std::shared_ptr<const void> model;
  const ExternalData* external = nullptr;
};
// Drops the resident pages that lie wholly inside `bytes`, a part of `raw`, when `raw` is mapped
// (they are read again from the file when touched); nothing otherwise.
void release_pages(std::span<const std::byte> bytes, const RawBytes& raw);
// Copies bytes [offset, offset + size) of `raw` to `destination`: E1358 when a mapped file shrank
// meanwhile (the copy is guarded, never a crash).
void copy_raw(const RawBytes& raw, size_t offset, size_t size, void* destination);

// A tensor whose values are known at import: an initializer, a Constant node, or a value
// computed from constants (shapes, axes, indices). Shape arithmetic on symbolic extents gives
// symbolic elements: expressions of the dims (`symbols`). An initializer stored as raw bytes
// keeps them (`raw`) and is decoded into doubles only when an operator reads its values, so a
// weight that only becomes a parameter is never decoded (docs/import.md, "Large models").
struct Constant {
  std::vector<int64_t> shape;
  int data_type = 0;           // onnx::TensorProto::DataType of the source
  std::string onnx_name;
  std::vector<SymInt> symbols;  // empty, or every element (values holds NaN where symbolic)
  std::shared_ptr<const RawBytes> raw;  // the undecoded bytes, or null: values() holds them

  // Every element as a double: exact for the float types and |int| ≤ 2^53. Decodes `raw` on
  // first use (kept: the constant is immutable once shared).
  const std::vector<double>& values() const;
  // The values to modify (decoded first); the constant stops being raw.
  std::vector<double>& mutable_values();
  // The element count, without decoding.
  size_t element_count() const;
  bool is_float() const;
  bool is_bool() const { return data_type == onnx::TensorProto::BOOL; }
  bool is_symbolic() const { return !symbols.empty(); }
  std::vector<int64_t> integers() const;  // of a constant that is not symbolic
  SymInt element(size_t index) const;      // element `index` as a symbolic integer

 private:
  mutable std::shared_ptr<std::vector<double>> values_;  // shared by copies until modified
};

// An ONNX value as the program sees it.
struct Value {
  std::string expr;  // a let name, an argument, `p.path` or a literal; empty: not yet materialized
  Shape shape;       // as presk types `expr` (a literal is a scalar)
  Kind kind = Kind::R;
  std::shared_ptr<const Constant> constant;  // when known at import
};

// One `let` of the entry body.
struct LetLine {
  std::string name;
  std::string expr;
  std::string comment;  // the node it belongs to
  std::set<std::string> uses;  // the earlier lets its expression reads
};

// A parameter made from a constant: its path in the module tree and its values.
struct ParamRecord {
  std::vector<std::string> path;  // sanitized components
  std::string onnx_name;
  std::shared_ptr<const Constant> constant;
};

// An entry argument made from a graph input.
struct Argument {
  std::string name;
  std::string onnx_name;
  Shape shape;
  Kind kind = Kind::R;
};

// A coded error that starts with the node it is about: `node "n" (MatMul): ...`.
class NodeError {
 public:
  NodeError(const char* code, const std::string& label) : inner_(code) { inner_ << label << ": "; }
  template <typename T>
  NodeError& operator<<(const T& value) {
    inner_ << value;
    return *this;
  }
  NodeError& hint(std::string text) {
    inner_.hint(std::move(text));
    return *this;
  }

 private:
  UserErrorBuilder inner_;  // throws when destroyed at the end of the statement
};

class Builder {
 public:
  Builder(int opset, const ImportOptions& options) : opset(opset), options(options) {}

  const int opset;  // of the default domain
  const ImportOptions& options;
  const onnx::NodeProto* node = nullptr;  // being translated
  TensorSource tensor_source;             // what the initializers' and Constants' bytes stay in

  // A coded error naming the current node and its operator.
  NodeError fail(const char* code) const { return NodeError(code, node_label()); }
  std::string node_label() const;  // `node "n" (MatMul)`

  // Operands of the current node. `input` materializes a constant (a literal or a parameter).
  bool has_input(int index) const;
  const Value& input(int index);
  Value& raw_input(int index);  // without materializing
  // A constant operand (shape, axes, starts, exponent, indices): E1305 when it is computed.
  // E1307 when it is symbolic (an expression of the dims; symbolic_input takes those).
  const Constant& constant_input(int index, std::string_view role);
  // A constant integer operand whose elements may be expressions of the dims (Reshape's
  // shape, Slice's starts and ends): E1305 when it is computed at run time.
  std::vector<SymInt> symbolic_input(int index, std::string_view role);
  size_t input_count() const;

  // Attributes of the current node.
  const onnx::AttributeProto* attribute(std::string_view name) const;
  int64_t int_attribute(std::string_view name, int64_t fallback) const;
  float float_attribute(std::string_view name, float fallback) const;
  std::string string_attribute(std::string_view name, std::string fallback) const;
  std::optional<std::vector<int64_t>> ints_attribute(std::string_view name) const;
  // Refuses every attribute of the node not in `known` (E1303).
  void accept_attributes(std::initializer_list<std::string_view> known) const;

  // A new let for the current node's output `output` (suffix for the helper lets of a
  // node that takes several: LayerNormalization's mean); returns the value it defines.
  Value emit(const std::string& expr, Shape shape, Kind kind = Kind::R, const std::string& suffix = "");
  void define(int output, Value value);  // the node's output `output` is `value`
  void define_value(const std::string& onnx_name, Value value);
  const Value* find(const std::string& onnx_name) const;

  // A materialized constant: a literal for a single float element (a symbolic one is its
  // expression of the dims), else (or `as_parameter`) a parameter.
  Value materialize(const Constant& constant, bool as_parameter = false);

  // An axis attribute in [-rank, rank) normalized to [0, rank) (E1303 outside).
  int64_t normalize_axis(int64_t axis, size_t rank, std::string_view role) const;

  // Results of the import.
  std::vector<LetLine> lets;
  std::vector<ParamRecord> params;
  std::vector<Argument> arguments;
  std::set<std::string> names_in_use;  // lets, arguments, dims, reserved words
  // --strip-qdq: the outputs of the QuantizeLinear nodes read only by DequantizeLinear nodes.
  std::set<std::string> stripped_quantize;
  // The element type (onnx::TensorProto::DataType) the graph states for a value: its inputs,
  // initializers, value_info, outputs and Constant nodes.
  std::map<std::string, int> element_types;
  // Values holding the integers of an ONNX integer type as reals (a Cast of floats; presk has no
  // conversion from R to Z): their type. Only some operators may read them (check_integer_reals).
  std::map<std::string, int> integer_reals;

  // A fresh identifier from an ONNX name (sanitized, unique among names_in_use).
  std::string fresh_name(const std::string& wanted);

 private:
  std::map<std::string, Value> values_;
  std::set<std::vector<std::string>> param_paths_;
  int unnamed_nodes_ = 0;
};

// `name` as a presk identifier: [A-Za-z0-9_], not starting with a digit, not a keyword.
std::string sanitize(std::string_view name);
// The shape ONNX gives a value (a literal's constant keeps its ONNX shape; presk sees a scalar).
Shape onnx_shape(const Value& value);
// `text` with control characters replaced, fit for a one-line comment or message.
std::string printable(std::string_view text);
// `x` with parentheses when it is a negative literal.
std::string operand(const Value& value);

// Shapes: the numpy broadcast of two shapes (E1308 when they do not broadcast).
Shape broadcast_shapes(const Builder& builder, const Shape& a, const Shape& b);
// The extent as a known integer, or E1307 naming the role when it is symbolic.
int64_t known_extent(const Builder& builder, const Extent& extent, std::string_view role);

// Decodes a TensorProto (E1304 for an unsupported type, E1309 for malformed data): raw data (in
// the model or external, memory-mapped) stays as RawBytes, typed fields are decoded.
std::shared_ptr<Constant> decode_tensor(const onnx::TensorProto& tensor, const std::string& context,
                                        const TensorSource& source = {});
// The doubles `bytes` of ONNX type `data_type` hold (raw data, little-endian).
std::vector<double> decode_raw(int data_type, std::span<const std::byte> bytes);

// The translators of one family each register their operators here.
using Translator = void (*)(Builder&);
void add_elementwise_translators(std::map<std::string, Translator>& table);
void add_contraction_translators(std::map<std::string, Translator>& table);
void add_layout_translators(std::map<std::string, Translator>& table);
void add_slice_translators(std::map<std::string, Translator>& table);
void add_conv_translators(std::map<std::string, Translator>& table);
void add_activation_translators(std::map<std::string, Translator>& table);
void add_reduce_translators(std::map<std::string, Translator>& table);
void add_quant_translators(std::map<std::string, Translator>& table);
void add_select_translators(std::map<std::string, Translator>& table);
void add_resize_translators(std::map<std::string, Translator>& table);
void add_math_translators(std::map<std::string, Translator>& table);
void add_scatter_translators(std::map<std::string, Translator>& table);
void add_integer_translators(std::map<std::string, Translator>& table);
void add_cast_translators(std::map<std::string, Translator>& table);
void add_einsum_translators(std::map<std::string, Translator>& table);
void add_group_norm_translators(std::map<std::string, Translator>& table);

// Integer types (translate_cast.cpp). The range [lo, hi] of INT8 … INT64, UINT8 … UINT32 (else
// nullopt); the bits m with −2^m ≤ v < 2^m for its every value v (63 for another type).
std::optional<std::pair<int64_t, int64_t>> integer_range(int type);
int integer_bits(int type);
// The Z value `exact` (−2^bits ≤ exact < 2^bits, bits ≤ 63) brought into `type`'s range modulo
// 2^b, ONNX's wrap-around: one let per bit above the type's, each subtracting 2^k where it fits.
Value wrapped_into(Builder& builder, const Value& exact, int bits, int type, const std::string& suffix);
// E1356 when the node reads integers held as reals where their meaning would differ from
// ONNX's (integer arithmetic); after a node that moves or selects them, its outputs hold them too.
void check_integer_reals(Builder& builder, const onnx::NodeProto& node);
// Integer tensors (translate_integer_arith.cpp): Add, Sub, Mul, Div ('+', '-', '*', '/') and
// "neg", "abs", "sign" of the node's operands, with ONNX's meaning on their type.
void integer_binary(Builder& builder, char symbol);
void integer_unary(Builder& builder, const std::string& function);
void mark_integer_reals(Builder& builder, const onnx::NodeProto& node);

// Shape arithmetic at import (fold_shapes.cpp): the operators evaluated when every operand is
// known at import, and the evaluation of the current node (false: not every operand is).
const std::set<std::string>& import_time_operators();
bool fold_node(Builder& builder);

// E1316 when a value of `shape` would hold more than 2^40 elements (its dims counted as 1).
void check_element_count(const Builder& builder, const Shape& shape, std::string_view what);

// The node's operand `index` as a float value (E1304 when it is an integer or boolean tensor).
const Value& real_input(Builder& builder, int index);

// The node's operand `index` as a value of `kind`, R or Z (E1304 otherwise): a single integer
// constant is a Z literal, so that integer operators read integer bounds (Clip, Where).
Value number_input(Builder& builder, int index, Kind kind);
// The positions 0 … count−1 along the first of `1 + trailing` axes, as a parameter of reals
// (`[count, 1, …]`; the literal 0.0 for one position), named after the node's output and `suffix`.
Value positions(Builder& builder, int64_t count, size_t trailing, const std::string& suffix);
// An index operand: a run-time Z tensor as it is, a constant one as a parameter of reals (exact).
Value index_input(Builder& builder, int index);
// The product of x's elements along `axis` (a known extent), which keeps that axis with extent
// 1: halved by slices multiplied pairwise, log₂ n lets (translate_reduce.cpp).
Value product_along(Builder& builder, const Value& x, size_t axis, const std::string& suffix);
// `x[:, …, from : to]` on axis `axis`.
std::string slice_text(const std::string& x, size_t axis, int64_t from, int64_t to);
// True when the node's operand `index` is absent or a constant of zeros (a zero point;
// translate_quant.cpp).
bool absent_or_zero(const Builder& builder, int index);
// `shape` with `extent` inserted before axis `at`; `function(x, axis: n)` (translate_select.cpp).
Shape with_axis(Shape shape, size_t at, Extent extent);
std::string axis_call(const std::string& function, const std::string& x, size_t axis);

// The node's operand as a tensor of its ONNX shape (a literal reshaped when ONNX gives it axes).
Value tensor_input(Builder& builder, int index);

// Re-expresses a value with a given shape by `reshape` (no let when the shape is equal).
Value reshaped(Builder& builder, const Value& value, const Shape& shape, const std::string& suffix = "");

// Defines the node's output 0 as the elementwise `expr` over `operands`, with ONNX's broadcast
// shape (translate_elementwise.cpp).
void define_elementwise(Builder& builder, const std::string& expr, const std::vector<const Value*>& operands,
                        Kind kind = Kind::R);
// `parts` joined along `axis` (known extents), nested where there are more than one concat
// takes (translate_conv.cpp).
Value concat_all(Builder& builder, std::vector<Value> parts, int64_t axis, const std::string& suffix);

}  // namespace presk::onnx_import
