// The program's scope: its declarations resolved and evaluated under the front-end options
// (consts with their overrides, dims with their bindings, modules with their parameters,
// every function's signature), and the evaluation of shapes and compile-time numbers.
// Shapes are symbolic in the source and concrete here: every const and dim is bound to an
// integer first, then shapes are checked as integers; errors point at the source.
#pragma once

#include <deque>
#include <map>
#include <optional>

#include "lang/ast.h"
#include "lang/frontend.h"
#include "support/exact_real.h"

namespace presk::lang {

// The largest tensor the front end accepts, in elements (E0310 beyond).
inline constexpr int64_t kMaxElements = int64_t{1} << 40;
// The most parameter tensors a parameter tree may hold (E0341 beyond).
inline constexpr size_t kMaxParams = 100000;

struct ConstInfo {
  const ConstDecl* decl = nullptr;
  bool valid = false;
  bool integer = true;
  int64_t value = 0;   // when integer
  ExactReal real;      // the value, exactly
  std::string text;    // the value as exact text: a decimal or N/D (the IR's literal)
};

struct DimInfo {
  const DimDecl* decl = nullptr;
  std::optional<int64_t> value;  // from --dim
  bool reported_unbound = false;
};

struct ModuleInfo;

// A function's resolved signature.
struct FunctionInfo {
  const FnDecl* decl = nullptr;
  const ModuleInfo* module = nullptr;  // the module it belongs to (null: free function, entry)
  std::string ir_name;                 // "LayerNorm.apply", or the entry's / free fn's name
  std::vector<std::string> argument_names;  // tensor arguments (the parameter tree excluded)
  std::vector<ir::Type> argument_types;
  std::vector<Loc> argument_locs;
  std::vector<bool> argument_valid;   // its type evaluated (else the body does not report on it)
  ir::Type result_type;                // the first result
  std::vector<ir::Type> result_types;  // every result: -> (A, B, …) declares several
  bool valid = false;                  // the signature evaluated without error
  const ModuleInfo* root = nullptr;    // entries: the module of the parameter-tree argument
  std::string tree_argument;           // entries: that argument's name
};

struct ParamInfo {
  enum class Kind : uint8_t { Tensor, Module, Stack };
  const ParamDecl* decl = nullptr;
  Kind kind = Kind::Tensor;
  bool valid = false;
  ir::Type type;                        // tensor: its type
  ir::Initializer init;                 // tensor: its initializer
  const ModuleInfo* module = nullptr;   // module, stack: the module
  int64_t layers = 0;                   // stack: number of layers
  std::string layers_name;              // stack: the const that counts them, as an axis name
};

struct ModuleInfo {
  const ModuleDecl* decl = nullptr;
  std::vector<ParamInfo> params;  // declaration order
  std::map<std::string, const FunctionInfo*> functions;

  const ParamInfo* find_param(const std::string& name) const;
};

class ProgramScope {
 public:
  ProgramScope(const ProgramAst& ast, std::shared_ptr<const SourceFile> source,
               const FrontendOptions& options, DiagnosticSink& sink);

  Span span(Loc loc) const { return Span{source_, loc.begin, loc.end}; }
  void report(const std::string& code, Loc loc, std::string message, std::string hint = {});
  DiagnosticSink& sink() { return sink_; }

  // Integer arithmetic over consts and dims (+ − × and exact ÷), overflow-checked.
  std::optional<int64_t> eval_integer(const Expr& expr);
  // A positive extent (an axis size, a layer count).
  std::optional<int64_t> eval_extent(const Expr& expr);
  // A compile-time real: numbers, consts, dims, + − × ÷, folded exactly (rationals).
  std::optional<ExactReal> eval_exact_real(const Expr& expr);
  // The same, rounded once to the nearest double (initializer and dropout arguments).
  std::optional<double> eval_real(const Expr& expr);
  // The size limit of an exact compile-time real's numerator and denominator.
  static constexpr size_t kMaxExactRealBits = 65536;
  // A tensor type; axes named by the const or dim that sized them.
  std::optional<ir::Type> eval_tensor_type(const TypeExpr& type);
  // E0310 when `type` has more than kMaxElements elements (or overflows counting them).
  bool check_size(const ir::Type& type, Loc loc);

  const ConstInfo* find_const(const std::string& name) const;
  const DimInfo* find_dim(const std::string& name) const;
  const ModuleInfo* find_module(const std::string& name) const;
  const FunctionInfo* find_free_function(const std::string& name) const;
  const std::deque<FunctionInfo>& functions() const { return functions_; }
  const std::map<std::string, ConstInfo>& consts() const { return consts_; }
  const std::map<std::string, DimInfo>& dims() const { return dims_; }
  const ProgramAst& ast() const { return ast_; }

 private:
  void declare_consts(const FrontendOptions& options);
  void declare_dims(const FrontendOptions& options);
  void declare_modules();
  void resolve_param(ParamInfo& param);
  std::optional<ir::Initializer> eval_initializer(const ParamDecl& param);
  void declare_functions();
  void resolve_signature(FunctionInfo& info);
  bool resolve_tree_argument(FunctionInfo& info, const ArgumentDecl& argument, size_t index);
  void check_roots();
  void check_module_cycles();
  std::optional<int64_t> eval_name(const NameExpr& name);
  std::optional<ExactReal> eval_exact_binary(const BinaryExpr& binary);
  bool claim_name(const std::string& name, Loc loc, const char* what);

  const ProgramAst& ast_;
  std::shared_ptr<const SourceFile> source_;
  DiagnosticSink& sink_;
  std::map<std::string, ConstInfo> consts_;
  std::map<std::string, DimInfo> dims_;
  std::map<std::string, ModuleInfo> modules_;
  std::deque<FunctionInfo> functions_;
  std::map<std::string, const FunctionInfo*> free_functions_;
  std::map<std::string, Loc> value_names_;  // consts and dims share one namespace
};

}  // namespace presk::lang
