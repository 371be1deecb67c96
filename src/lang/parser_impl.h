// The parser's state, shared by the declaration parser (parse_decls.cpp) and the
// expression parser (parse_exprs.cpp). Private to src/lang.
#pragma once

#include "lang/parser.h"

namespace presk::lang::detail {

// Thrown at a syntax error (after reporting it) to unwind to the nearest recovery point.
struct ParseError {};
// Thrown when too many errors were reported to go on.
struct ParseAbort {};

class Parser {
 public:
  Parser(const std::shared_ptr<const SourceFile>& source, const std::vector<Token>& tokens,
         DiagnosticSink& sink)
      : source_(source), tokens_(tokens), sink_(sink) {}

  ProgramAst parse_program();

  // Expressions (parse_exprs.cpp).
  ExprPtr parse_expr();
  TypeExpr parse_type();

 private:
  // Token access.
  const Token& peek(size_t ahead = 0) const;
  bool at(TokenKind kind) const { return peek().kind == kind; }
  bool accept(TokenKind kind);
  const Token& advance();
  const Token& expect(TokenKind kind, const char* context);
  std::string expect_name(const char* context);
  [[noreturn]] void fail(const std::string& code, Loc loc, const std::string& message,
                         const std::string& hint = {});
  void report(const std::string& code, Loc loc, const std::string& message,
              const std::string& hint = {});
  Loc loc_from(uint32_t begin) const;

  // Declarations (parse_decls.cpp).
  void parse_declaration(ProgramAst& program);
  ModuleDecl parse_module();
  ParamDecl parse_param();
  FnDecl parse_function(bool is_entry);
  std::vector<ArgumentDecl> parse_arguments();
  BudgetClause parse_budget();
  void parse_body(FnDecl& fn);
  void parse_block(FnDecl& fn);
  void skip_until_declaration();
  void skip_until_member();
  void skip_until_statement();

  // Expression levels (parse_exprs.cpp).
  ExprPtr parse_comparison();
  ExprPtr parse_additive();
  ExprPtr parse_multiplicative();
  ExprPtr parse_unary();
  ExprPtr parse_postfix();
  ExprPtr parse_primary();
  ExprPtr parse_fold();
  ExprPtr parse_list();
  ExprPtr parse_call(ExprPtr callee);
  ExprPtr parse_index(ExprPtr object);
  ExprPtr checked(ExprPtr expr);
  std::vector<ExprPtr> parse_shape();

  friend class DepthGuard;
  const std::shared_ptr<const SourceFile>& source_;
  const std::vector<Token>& tokens_;
  DiagnosticSink& sink_;
  size_t position_ = 0;
  int nesting_ = 0;
  int reported_ = 0;
};

// Counts the parser's recursion; past kMaxExpressionDepth it is a syntax error (E0214).
class DepthGuard {
 public:
  explicit DepthGuard(Parser& parser);
  ~DepthGuard() { --parser_.nesting_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  Parser& parser_;
};

}  // namespace presk::lang::detail
