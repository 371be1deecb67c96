// The declaration half of the parser: const, dim, module (params and fns), fn and entry,
// function bodies, and the recovery points (statement, member, declaration).
#include "lang/parser_impl.h"

namespace presk::lang {
namespace detail {
namespace {

constexpr int kMaxParseDiagnostics = 50;

bool starts_declaration(TokenKind kind) {
  return kind == TokenKind::Const || kind == TokenKind::Dim || kind == TokenKind::Module ||
         kind == TokenKind::Entry || kind == TokenKind::Fn || kind == TokenKind::End;
}

}  // namespace

const Token& Parser::peek(size_t ahead) const {
  size_t at = std::min(position_ + ahead, tokens_.size() - 1);
  return tokens_[at];
}

bool Parser::accept(TokenKind kind) {
  if (!at(kind)) return false;
  advance();
  return true;
}

const Token& Parser::advance() {
  const Token& token = tokens_[position_];
  if (position_ + 1 < tokens_.size()) ++position_;
  return token;
}

void Parser::report(const std::string& code, Loc loc, const std::string& message,
                    const std::string& hint) {
  sink_.report(code, Span{source_, loc.begin, loc.end}, message, hint);
  if (++reported_ >= kMaxParseDiagnostics) throw ParseAbort{};
}

void Parser::fail(const std::string& code, Loc loc, const std::string& message,
                  const std::string& hint) {
  // A malformed token was already reported by the lexer: do not pile a second error on it.
  if (peek().kind != TokenKind::Error || loc.begin != peek().loc.begin) report(code, loc, message, hint);
  throw ParseError{};
}

const Token& Parser::expect(TokenKind kind, const char* context) {
  if (!at(kind)) {
    fail("E0211", peek().loc,
         "expected " + token_kind_name(kind) + " " + context + ", found " + token_kind_name(peek().kind));
  }
  return advance();
}

std::string Parser::expect_name(const char* context) {
  return expect(TokenKind::Identifier, context).text;
}

Loc Parser::loc_from(uint32_t begin) const {
  uint32_t end = position_ > 0 ? tokens_[position_ - 1].loc.end : begin;
  return Loc{begin, std::max(begin, end)};
}

void Parser::skip_until_declaration() {
  while (!starts_declaration(peek().kind)) advance();
}

void Parser::skip_until_member() {
  while (!at(TokenKind::Param) && !at(TokenKind::Fn) && !at(TokenKind::RightBrace) &&
         !starts_declaration(peek().kind)) {
    advance();
  }
}

void Parser::skip_until_statement() {
  while (!at(TokenKind::Let) && !at(TokenKind::RightBrace) && !at(TokenKind::Param) &&
         !starts_declaration(peek().kind)) {
    advance();
  }
}

ProgramAst Parser::parse_program() {
  ProgramAst program;
  try {
    while (!at(TokenKind::End)) {
      size_t start = position_;
      try {
        parse_declaration(program);
      } catch (const ParseError&) {
        if (position_ == start) advance();
        skip_until_declaration();
      }
    }
  } catch (const ParseAbort&) {
  }
  return program;
}

void Parser::parse_declaration(ProgramAst& program) {
  if (accept(TokenKind::Semicolon)) return;
  if (accept(TokenKind::Const)) {
    ConstDecl decl;
    decl.loc = peek().loc;
    decl.name = expect_name("after `const`");
    expect(TokenKind::Assign, "after the const's name");
    decl.value = parse_expr();
    program.consts.push_back(std::move(decl));
  } else if (accept(TokenKind::Dim)) {
    do {
      DimDecl decl{"", peek().loc};
      decl.name = expect_name("after `dim`");
      program.dims.push_back(std::move(decl));
    } while (accept(TokenKind::Comma));
  } else if (accept(TokenKind::Module)) {
    program.modules.push_back(parse_module());
  } else if (accept(TokenKind::Fn)) {
    program.functions.push_back(parse_function(false));
  } else if (accept(TokenKind::Entry)) {
    program.functions.push_back(parse_function(true));
  } else {
    fail("E0210", peek().loc, "expected a declaration, found " + token_kind_name(peek().kind),
         "a program is a list of `const`, `dim`, `module`, `fn` and `entry` declarations");
  }
}

ModuleDecl Parser::parse_module() {
  ModuleDecl module;
  module.loc = peek().loc;
  module.name = expect_name("after `module`");
  expect(TokenKind::LeftBrace, "to open the module");
  while (!at(TokenKind::RightBrace)) {
    if (starts_declaration(peek().kind) && !at(TokenKind::Fn)) {
      report("E0211", peek().loc, "expected `}` to close module `" + module.name + "`, found " +
                                      token_kind_name(peek().kind));
      return module;
    }
    size_t start = position_;
    try {
      if (accept(TokenKind::Semicolon)) continue;
      if (accept(TokenKind::Param)) {
        module.params.push_back(parse_param());
      } else if (accept(TokenKind::Fn)) {
        module.functions.push_back(parse_function(false));
      } else {
        fail("E0216", peek().loc, "expected `param`, `fn` or `}` in module `" + module.name +
                                      "`, found " + token_kind_name(peek().kind));
      }
    } catch (const ParseError&) {
      if (position_ == start) advance();
      skip_until_member();
    }
  }
  expect(TokenKind::RightBrace, "to close the module");
  return module;
}

// param NAME : TYPE [= INITIALIZER]
ParamDecl Parser::parse_param() {
  ParamDecl param;
  param.loc = peek().loc;
  param.name = expect_name("after `param`");
  expect(TokenKind::Colon, "after the parameter's name");
  param.type = parse_type();
  if (accept(TokenKind::Assign)) param.init = parse_expr();
  return param;
}

// fn NAME(ARGS) -> TYPE [precision = budget(...)] BODY
FnDecl Parser::parse_function(bool is_entry) {
  FnDecl fn;
  fn.is_entry = is_entry;
  fn.loc = peek().loc;
  fn.name = expect_name(is_entry ? "after `entry`" : "after `fn`");
  fn.arguments = parse_arguments();
  expect(TokenKind::Arrow, "before the result type");
  if (accept(TokenKind::LeftParen)) {  // -> (A, B, …): several results
    fn.result_type = parse_type();
    while (accept(TokenKind::Comma) && !at(TokenKind::RightParen)) fn.more_results.push_back(parse_type());
    expect(TokenKind::RightParen, "to close the result types");
  } else {
    fn.result_type = parse_type();
  }
  if (at(TokenKind::Precision)) fn.budget = parse_budget();
  parse_body(fn);
  return fn;
}

std::vector<ArgumentDecl> Parser::parse_arguments() {
  std::vector<ArgumentDecl> arguments;
  expect(TokenKind::LeftParen, "to open the argument list");
  while (!at(TokenKind::RightParen)) {
    ArgumentDecl argument;
    argument.loc = peek().loc;
    argument.name = expect_name("(an argument's name)");
    expect(TokenKind::Colon, "after the argument's name");
    argument.type = parse_type();
    arguments.push_back(std::move(argument));
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RightParen, "to close the argument list");
  return arguments;
}

// precision = budget(rel_error = 1e-3, …)
BudgetClause Parser::parse_budget() {
  BudgetClause clause;
  clause.loc = advance().loc;
  const char* form = "write `precision = budget(rel_error = 1e-3)`";
  if (!accept(TokenKind::Assign) || !at(TokenKind::Identifier) || peek().text != "budget" ||
      peek(1).kind != TokenKind::LeftParen) {
    fail("E0215", peek().loc, "malformed precision clause", form);
  }
  advance();
  advance();
  while (!at(TokenKind::RightParen)) {
    if (!at(TokenKind::Identifier) || peek(1).kind != TokenKind::Assign ||
        peek(2).kind != TokenKind::Number) {
      fail("E0215", peek().loc, "malformed term in the precision budget", form);
    }
    std::string key = advance().text;
    advance();
    clause.terms.emplace_back(key, advance().text);
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RightParen, "to close the budget");
  clause.loc = loc_from(clause.loc.begin);
  return clause;
}

// = EXPR  or  { let NAME = EXPR … EXPR }
void Parser::parse_body(FnDecl& fn) {
  if (accept(TokenKind::Assign)) {
    fn.result = parse_expr();
    return;
  }
  if (!at(TokenKind::LeftBrace)) {
    fail("E0211", peek().loc, "expected `=` or `{` to begin the body of `" + fn.name + "`, found " +
                                  token_kind_name(peek().kind));
  }
  parse_block(fn);
}

void Parser::parse_block(FnDecl& fn) {
  uint32_t open = advance().loc.begin;
  bool failed = false;
  while (!at(TokenKind::RightBrace) && !starts_declaration(peek().kind) && !at(TokenKind::Param)) {
    size_t start = position_;
    try {
      if (accept(TokenKind::Semicolon)) continue;
      if (accept(TokenKind::Let)) {
        LetStmt let;
        let.loc = peek().loc;
        if (accept(TokenKind::LeftParen)) {  // let (a, b) = f(…): a function's several results
          do {
            let.names.push_back(expect_name("in `let (a, b) = …`"));
          } while (accept(TokenKind::Comma));
          expect(TokenKind::RightParen, "to close the names");
          let.name = let.names.front();
        } else {
          let.name = expect_name("after `let`");
        }
        expect(TokenKind::Assign, "after the let's name");
        let.value = parse_expr();
        fn.lets.push_back(std::move(let));
      } else if (fn.result) {
        fail("E0211", peek().loc, "expected `}` after the result of `" + fn.name + "`, found " +
                                      token_kind_name(peek().kind),
             "the result expression is the last thing in a body");
      } else {
        fn.result = parse_expr();
      }
    } catch (const ParseError&) {
      failed = true;
      if (position_ == start) advance();
      skip_until_statement();
    }
  }
  expect(TokenKind::RightBrace, "to close the body");
  if (!fn.result && !failed) {
    report("E0217", loc_from(open), "the body of `" + fn.name + "` has no result expression",
           "end the body with the expression whose value it returns");
  }
}

}  // namespace detail

ProgramAst parse(const std::shared_ptr<const SourceFile>& source, const std::vector<Token>& tokens,
                 DiagnosticSink& sink) {
  return detail::Parser(source, tokens, sink).parse_program();
}

}  // namespace presk::lang
