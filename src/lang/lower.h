// Type checking and lowering of one function body: each expression is checked against the
// typing rules (docs/language.md) and, when it is well typed, becomes one or more lets of
// an ir::Function, numbered in SSA order within that function only, so a site's name
// `<Module.fn>/%<n>` never depends on other functions. Private to src/lang.
#pragma once

#include <set>

#include "lang/scope.h"

namespace presk::lang {

// A checked value: a reference to an argument or let of the function being built, and its
// type. `ok` is false after an error, and everything computed from it is silently invalid,
// so one mistake gives one diagnostic.
struct Value {
  ir::ValueRef ref;
  ir::Type type;
  bool ok = false;
};

// What a (possibly dotted) name denotes: a tensor parameter, a module parameter, a stack,
// or a function of a module parameter; `path` is relative to the calling context.
struct Resolved {
  enum class Kind : uint8_t { Tensor, Module, Stack, Function };
  Kind kind = Kind::Tensor;
  std::string path;                        // parameter path; Function: the callee's module path
  const ParamInfo* param = nullptr;        // Tensor, Module, Stack
  const ModuleInfo* module = nullptr;      // Module, Stack, and the module of a Function
  const FunctionInfo* function = nullptr;  // Function
  bool through_stack = false;              // a Function reached through a stack (`blocks.apply`)
};

class FunctionLowerer {
 public:
  FunctionLowerer(ProgramScope& scope, const FunctionInfo& info, const FrontendOptions& options);

  // The function's IR, complete when no error was reported; `callees` what it calls.
  ir::Function lower();
  const std::set<std::string>& callees() const { return callees_; }

  // For the primitives (lower_builtins.cpp).
  Value lower_expr(const Expr& expr, std::optional<ir::ElemKind> literal_kind = std::nullopt);
  Value emit(ir::Op op, ir::Type type, const std::vector<Value>& operands, ir::Attrs attrs, Loc loc);
  Value convert(Value value, ir::ElemKind kind, Loc loc);
  Value to_real(Value value, Loc loc) { return convert(std::move(value), ir::ElemKind::Real, loc); }
  Value elementwise(ir::Op op, std::vector<Value> operands, Loc loc);
  void report(const std::string& code, Loc loc, std::string message, std::string hint = {});
  ProgramScope& scope() { return scope_; }
  bool training() const { return options_.training; }
  // A dropout's id, what its training mask is keyed by: "GPT.apply/%7" with the index the next
  // let will have in the training compile (not its site name, ir::Function::site_name).
  std::string dropout_key() const { return function_.name + "/%" + std::to_string(function_.lets.size()); }

 private:
  Value lower_value(const Expr& expr, std::optional<ir::ElemKind> literal_kind);
  Value lower_number(const NumberExpr& number, std::optional<ir::ElemKind> kind);
  Value literal(std::string text, ir::ElemKind kind, Loc loc);
  Value lower_name(const NameExpr& name);
  Value lower_unary(const UnaryExpr& unary, std::optional<ir::ElemKind> literal_kind = std::nullopt);
  Value lower_binary(const BinaryExpr& binary);
  Value lower_call(const CallExpr& call);
  Value lower_member(const Expr& expr);
  Value lower_index(const IndexExpr& index);
  Value lower_fold(const FoldExpr& fold);
  // Decode (lower_decode.cpp): a fold that carries state, tuples of results.
  Value lower_scan(const FoldExpr& fold, const FunctionInfo& callee, const std::string& path, int64_t layers);
  void bind_results(const LetStmt& let, const Value& value);
  void lower_results(const FnDecl& decl);
  Value call_function(const FunctionInfo& callee, const std::string& path, const CallExpr& call);
  Value read_param(const Resolved& resolved, Loc loc);
  std::optional<Resolved> resolve(const Expr& expr);
  std::optional<Resolved> resolve_path(const std::vector<std::pair<std::string, Loc>>& segments);
  std::optional<Resolved> step(const Resolved& from, const std::string& name, Loc loc);

  ProgramScope& scope_;
  const FunctionInfo& info_;
  const FrontendOptions& options_;
  ir::Function function_;
  std::map<std::string, Value> locals_;
  std::set<std::string> callees_;
  bool allow_tuple_ = false;  // the expression being lowered may be a tuple (let (a, b) = …, a result)
};

// Every function checked and lowered; the program of the selected entries assembled: the
// functions they reach (callees first), the parameters of their root module, the bindings.
ir::Program lower_program(ProgramScope& scope, const FrontendOptions& options);

// The primitives called by name (exp, sum, softmax, einsum, …): lowers `call` when `name`
// is one, and returns nullopt when it is not.
std::optional<Value> lower_builtin(FunctionLowerer& lowerer, const std::string& name, const CallExpr& call);
// An integer literal, or one negated: it takes the element kind of the operand it meets.
bool is_integer_literal(const Expr& expr);

// Typing rules shared by operators and primitives (lower_rules.cpp). Each returns the
// result type, or nullopt after reporting why there is none.
std::optional<ir::Type> broadcast_types(FunctionLowerer& lowerer, const std::vector<ir::Type>& types, Loc loc);
std::optional<ir::Type> contract_type(FunctionLowerer& lowerer, const std::string& spec, const ir::Type& a,
                                      const ir::Type& b, Loc loc);
// The einsum spec of `a @ b` (numpy matmul), or nullopt after reporting.
std::optional<std::string> matmul_spec(FunctionLowerer& lowerer, const ir::Type& a, const ir::Type& b, Loc loc);

}  // namespace presk::lang
