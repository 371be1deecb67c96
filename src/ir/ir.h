// presk's IR: a Program of Functions; a Function is a list of Lets in SSA form, each one
// primitive (src/ir/ops.def) applied to the function's arguments or earlier lets, with a
// static shape. Shapes are concrete: consts and dims are bound before lowering. A let is a
// *site*, named `<Module.fn>/%<n>` by its function and its number.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace presk::ir {

enum class Op : uint8_t {
#define PRESK_OP(name, arity, family) name,
#include "ir/ops.def"
#undef PRESK_OP
};

enum class OpFamily : uint8_t {
  Source, Elementwise, Reduction, Contraction, Normalization, Gather, Layout, Loss, Control
};

struct OpInfo {
  const char* name;
  int arity;  // -1: variable
  OpFamily family;
};

// Facts of every op, indexed by Op.
const OpInfo& op_info(Op op);
inline const char* op_name(Op op) { return op_info(op).name; }
// Ops whose attrs.callee names a function: call, fold, fold_trace, fold_vjp, scan.
inline bool is_calling(Op op) {
  return op == Op::call || op == Op::fold || op == Op::fold_trace || op == Op::fold_vjp || op == Op::scan;
}
// Ops that run their callee once per layer of a stack: fold, fold_trace, fold_vjp, scan.
inline bool is_folding(Op op) { return is_calling(op) && op != Op::call; }
std::optional<Op> op_from_name(std::string_view name);
int op_count();

// Element kinds: R real, Z integer, B bool.
enum class ElemKind : uint8_t { Real, Int, Bool };
const char* elem_kind_name(ElemKind kind);  // "R", "Z", "B"

// A value's type: element kind and a static shape; `axes` names each axis where the
// source named it (empty string where not), so reductions and dumps can say "axis D".
// A *tuple* type (`elements` non-empty; kind R and shape empty) is the type of a `call` of
// a function with several results and of `fold_trace`/`fold_vjp`; only `get` reads it.
struct Type {
  ElemKind kind = ElemKind::Real;
  std::vector<int64_t> shape;      // empty: a scalar
  std::vector<std::string> axes;   // same length as shape, or empty when no axis is named
  std::vector<Type> elements = {};  // a tuple's element types; empty for a tensor

  int64_t element_count() const;   // product of shape (1 for a scalar); a tuple: the sum
  int rank() const { return static_cast<int>(shape.size()); }
  bool is_tuple() const { return !elements.empty(); }
  bool operator==(const Type& other) const {
    return kind == other.kind && shape == other.shape && elements == other.elements;
  }
};
Type tuple_type(std::vector<Type> elements);
std::string type_to_string(const Type& type);  // "R[256, 64]", "Z[257]", "R"
std::string shape_text(const std::vector<int64_t>& shape);  // "[8, 64]"

// An operand: one of the function's arguments or an earlier let.
struct ValueRef {
  enum class Kind : uint8_t { Argument, Let };
  Kind kind = Kind::Let;
  uint32_t index = 0;

  static ValueRef argument(uint32_t i) { return {Kind::Argument, i}; }
  static ValueRef let(uint32_t i) { return {Kind::Let, i}; }
  bool operator==(const ValueRef& other) const = default;
};
std::string value_ref_text(ValueRef value);  // "$0" for an argument, "%3" for a let

// Attributes; which fields an op reads is stated beside it in ops.def.
struct Attrs {
  std::vector<int64_t> axes;    // reduction axes, softmax/concat/iota axis, permutation, slice axes
  std::vector<int64_t> starts;  // slice
  std::vector<int64_t> stops;   // slice
  std::string literal;          // literal: decimal text or an exact quotient "N/D"
  std::string spec;             // contract: einsum spec
  std::string callee;           // call, fold: function name
  std::string path;             // param: parameter path; call/fold: module path of the callee
  double rate = 0;              // dropout

  bool operator==(const Attrs& other) const = default;
};

struct Let {
  Op op;
  Type type;
  std::vector<ValueRef> operands;
  Attrs attrs;
  Span span;  // where in the source it came from (unknown for generated lets)
  // In a `F.vjp`: the sites of F whose complete adjoint ∂L/∂v this let holds (docs/ad.md);
  // several when they share one value (both operands of an `add`).
  std::vector<uint32_t> adjoint_of = {};
};

// How a fresh parameter is synthesized from a seed.
struct Initializer {
  enum class Kind : uint8_t { Zeros, Ones, Normal, Uniform };
  Kind kind = Kind::Zeros;
  double a = 0;  // normal: σ; uniform: low
  double b = 0;  // uniform: high
  bool operator==(const Initializer& other) const = default;
};
std::string initializer_to_string(const Initializer& init);  // "zeros", "normal(0.02)", …

// The shortest decimal text that reads back (std::from_chars) to exactly `value`:
// "0.02", "1e-05", "-0", "inf", "nan".
std::string real_to_string(double value);

// A parameter tensor of the program, by its full path from the entry's root module
// (`blocks.ff.up.w`). A parameter inside `stack{L}` has L as its leading axis.
struct Param {
  std::string path;
  Type type;
  Initializer init;
  int stack_depth = 0;  // number of leading stack axes
};

struct Function {
  std::string name;        // "LayerNorm.apply", "GPT.apply", or an entry's name "loss"
  std::string module;      // the module whose parameters `param` lets read ("" for none)
  bool is_entry = false;
  std::vector<std::string> argument_names;
  std::vector<Type> argument_types;
  std::vector<Let> lets;
  std::vector<ValueRef> results;  // usually one
  // Empty, or one name per result: a `.vjp` names each cotangent it returns, `$i` for
  // argument i, a parameter path (relative to the function's context) for a parameter.
  std::vector<std::string> result_names;
  // In a `F.vjp`: the sites of F whose complete adjoint is its last argument, the cotangent
  // (F's result site, and any site whose adjoint passes through unchanged).
  std::vector<uint32_t> cotangent_adjoint_of = {};
  // An entry's `precision = budget(…)` clause: each term as written ("rel_error" → "1e-3");
  // `presk solve` takes it as its default budget.
  std::vector<std::pair<std::string, std::string>> budget = {};
  Span span;

  const Type& type_of(ValueRef value) const;
  // The let's stable name: "LayerNorm.apply/%4", where %n counts the function's lets other than
  // `dropout`, which only a training compile emits, and `quantize`, which only the chip's quantize
  // pass inserts; the k-th dropout is "LayerNorm.apply/dropout<k>", the k-th quantize
  // "LayerNorm.apply/quantize<k>". So %n names the same value whether the program was compiled
  // for inference or training, with or without a chip's quantizes (a realization or a contract
  // written for one applies to the others). In a function without dropout, n is
  // the let's index, the %n of the printed IR.
  std::string site_name(uint32_t let_index) const;
};

// How `param`, `call` and `fold` resolve parameters. Every call runs in a context: a module
// path (`blocks.ff`, "" at the entry) and the layer indices of the stacks it is inside.
//  * `param` with attrs.path `up.w` reads the Param whose path is `<context path>.up.w`
//    (without the dot at the root); that Param has one leading axis per enclosing stack
//    (stack_depth), and the let reads the slice at the context's layer indices, so the
//    let's type is the Param's type without those leading axes.
//  * `call` with attrs.path `ff` runs attrs.callee in context `<context path>.ff` with the
//    same layer indices (attrs.path empty: the same context, e.g. a helper of the module).
//  * `fold` with attrs.path `blocks` runs attrs.callee once per layer l = 0 … L−1 of the
//    stack at `<context path>.blocks`, in context (`<context path>.blocks`, indices + [l]),
//    feeding each layer's result to the next; L is the leading extent of that stack's params.
struct Program {
  std::vector<Param> params;        // every parameter tensor, in declaration order
  std::vector<Function> functions;  // callees before callers
  std::vector<std::pair<std::string, int64_t>> consts;  // the bound consts, for dumps
  std::vector<std::pair<std::string, int64_t>> dims;    // the bound dims

  const Function* find_function(std::string_view name) const;
  const Param* find_param(std::string_view path) const;
};

// `context.path`, or either alone when the other is empty: a path of a `param`, `call` or
// `fold` resolved in the module context it runs in (above).
std::string join_path(const std::string& context, const std::string& path);

// Calls visit(function, i, full path) for every `param` let i reached from `entry` through
// calls and folds, once per function and module context it runs in.
void for_each_param_let(const Program& program, const Function& entry,
                        const std::function<void(const Function&, uint32_t, const std::string&)>& visit);

}  // namespace presk::ir
