// The abstract syntax tree of a presk program: small immutable nodes, shared so that the
// type checker and the dumps can hold them freely. Every node carries its source range.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lang/lexer.h"

namespace presk::lang {

enum class ExprKind : uint8_t { Number, String, Name, Unary, Binary, Call, Member, Index, List, Fold, Tuple };

// Binary operators, by precedence class: comparisons < additive < multiplicative.
enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, MatMul, Lt, Le, Gt, Ge, Eq, Ne };
const char* binary_op_text(BinaryOp op);  // "+", "@", "<=", …

struct Expr {
  ExprKind kind;
  Loc loc;
  int depth = 1;  // height of the tree below (and including) this node
  Expr(ExprKind k, Loc l) : kind(k), loc(l) {}
  virtual ~Expr() = default;
  template <typename T>
  const T& as() const { return static_cast<const T&>(*this); }
};
using ExprPtr = std::shared_ptr<const Expr>;

// 12, 0.5, 1e-5: the text as written; `integer` when it has no point and no exponent.
struct NumberExpr : Expr {
  std::string text;
  bool integer = false;
  NumberExpr(Loc l, std::string t, bool i) : Expr(ExprKind::Number, l), text(std::move(t)), integer(i) {}
};

// "td,dv->tv" (an einsum spec).
struct StringExpr : Expr {
  std::string text;
  StringExpr(Loc l, std::string t) : Expr(ExprKind::String, l), text(std::move(t)) {}
};

// A name: a let, an argument, a parameter of the module, a const or a dim.
struct NameExpr : Expr {
  std::string name;
  NameExpr(Loc l, std::string n) : Expr(ExprKind::Name, l), name(std::move(n)) {}
};

// -x
struct UnaryExpr : Expr {
  ExprPtr operand;
  UnaryExpr(Loc l, ExprPtr o) : Expr(ExprKind::Unary, l), operand(std::move(o)) { depth = operand->depth + 1; }
};

struct BinaryExpr : Expr {
  BinaryOp op;
  ExprPtr lhs, rhs;
  BinaryExpr(Loc l, BinaryOp o, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Binary, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {
    depth = std::max(lhs->depth, rhs->depth) + 1;
  }
};

// One argument of a call: positional (`name` empty) or named (`axis: D`).
struct Argument {
  std::string name;
  Loc name_loc;
  ExprPtr value;
};

// f(a, b, axis: D) or ln1.apply(x): `callee` is a NameExpr or a MemberExpr.
struct CallExpr : Expr {
  ExprPtr callee;
  std::vector<Argument> arguments;
  CallExpr(Loc l, ExprPtr c, std::vector<Argument> a);
};

// object.name: a parameter or a function of a module parameter.
struct MemberExpr : Expr {
  ExprPtr object;
  std::string name;
  Loc name_loc;
  MemberExpr(Loc l, ExprPtr o, std::string n, Loc nl)
      : Expr(ExprKind::Member, l), object(std::move(o)), name(std::move(n)), name_loc(nl) {
    depth = object->depth + 1;
  }
};

// One item of an index: `a : b`, `a :`, `: b`, `:` (a range) or `a` (one position).
struct SliceItem {
  Loc loc;
  bool range = false;
  ExprPtr start;  // may be null in a range
  ExprPtr stop;   // may be null
};

// x[0 : T, :]
struct IndexExpr : Expr {
  ExprPtr object;
  std::vector<SliceItem> items;
  IndexExpr(Loc l, ExprPtr o, std::vector<SliceItem> i);
};

// [T, H, D / H]: a shape or a permutation, as an argument.
struct ListExpr : Expr {
  std::vector<ExprPtr> elements;
  ListExpr(Loc l, std::vector<ExprPtr> e);
};

// fold blocks over x: the stacked module parameter `path` applied layer by layer.
struct FoldExpr : Expr {
  std::vector<std::string> path;  // blocks, or p.blocks, or blocks.apply
  Loc path_loc;
  ExprPtr initial;
  FoldExpr(Loc l, std::vector<std::string> p, Loc pl, ExprPtr i)
      : Expr(ExprKind::Fold, l), path(std::move(p)), path_loc(pl), initial(std::move(i)) {
    depth = initial->depth + 1;
  }
};

// (a, b, c): a function's several results, or the operands of a fold that carries state
// (`fold blocks.decode over (x, cache, at)`).
struct TupleExpr : Expr {
  std::vector<ExprPtr> elements;
  TupleExpr(Loc l, std::vector<ExprPtr> e);
};

// A type as written: R[T, D] (a tensor), LayerNorm (a module), stack{L} Block.
struct TypeExpr {
  enum class Kind : uint8_t { Tensor, Module, Stack };
  Kind kind = Kind::Tensor;
  Loc loc;
  std::string name;             // "R", "Z", "B" for a tensor; the module's name otherwise
  std::vector<ExprPtr> shape;   // tensor: one expression per axis
  ExprPtr count;                // stack: the number of layers
};

struct ConstDecl {
  std::string name;
  Loc loc;
  ExprPtr value;
};

struct DimDecl {
  std::string name;
  Loc loc;
};

struct ParamDecl {
  std::string name;
  Loc loc;
  TypeExpr type;
  ExprPtr init;  // null when none was written
};

struct ArgumentDecl {
  std::string name;
  Loc loc;
  TypeExpr type;
};

struct LetStmt {
  std::string name;
  Loc loc;
  ExprPtr value;
  std::vector<std::string> names = {};  // let (a, b) = …: one per result (then `name` is the first)
};

// `precision = budget(rel_error = 1e-3)` on an entry.
struct BudgetClause {
  Loc loc;
  std::vector<std::pair<std::string, std::string>> terms;  // rel_error → "1e-3"
};

// fn name(args) -> type { lets; result } or = result; `entry` for the program's entries.
struct FnDecl {
  std::string name;
  Loc loc;  // the name
  bool is_entry = false;
  std::vector<ArgumentDecl> arguments;
  TypeExpr result_type;
  std::vector<TypeExpr> more_results = {};  // -> (A, B, …): the results after the first
  std::optional<BudgetClause> budget;
  std::vector<LetStmt> lets;
  ExprPtr result;
};

struct ModuleDecl {
  std::string name;
  Loc loc;
  std::vector<ParamDecl> params;
  std::vector<FnDecl> functions;
};

struct ProgramAst {
  std::vector<ConstDecl> consts;
  std::vector<DimDecl> dims;
  std::vector<ModuleDecl> modules;
  std::vector<FnDecl> functions;  // free functions and entries, in source order
};

// A readable indented print of the tree (what `presk dump --stage ast` shows).
std::string print_ast(const ProgramAst& program);

}  // namespace presk::lang
