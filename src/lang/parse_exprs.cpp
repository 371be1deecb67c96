// The expression half of the parser: precedence climbing over comparisons, additive and
// multiplicative operators (`@` binds like `*`), unary minus, postfix calls, members and
// indexing; primaries; and types (R[T, D], LayerNorm, stack{L} Block).
#include "lang/parser_impl.h"

namespace presk::lang::detail {
namespace {

std::optional<BinaryOp> comparison_op(TokenKind kind) {
  switch (kind) {
    case TokenKind::Less: return BinaryOp::Lt;
    case TokenKind::LessEqual: return BinaryOp::Le;
    case TokenKind::Greater: return BinaryOp::Gt;
    case TokenKind::GreaterEqual: return BinaryOp::Ge;
    case TokenKind::EqualEqual: return BinaryOp::Eq;
    case TokenKind::NotEqual: return BinaryOp::Ne;
    default: return std::nullopt;
  }
}

std::optional<BinaryOp> multiplicative_op(TokenKind kind) {
  switch (kind) {
    case TokenKind::Star: return BinaryOp::Mul;
    case TokenKind::Slash: return BinaryOp::Div;
    case TokenKind::At: return BinaryOp::MatMul;
    default: return std::nullopt;
  }
}

Loc join(Loc a, Loc b) { return Loc{std::min(a.begin, b.begin), std::max(a.end, b.end)}; }

}  // namespace

DepthGuard::DepthGuard(Parser& parser) : parser_(parser) {
  if (++parser_.nesting_ > kMaxExpressionDepth) {
    --parser_.nesting_;
    parser_.fail("E0214", parser_.peek().loc, "expressions are nested too deeply",
                 "the limit is " + std::to_string(kMaxExpressionDepth) +
                     " levels; name intermediate values with `let`");
  }
}

// A node whose tree is deeper than the limit (a long chain `a + a + … + a`) is refused too:
// later passes walk the tree recursively.
ExprPtr Parser::checked(ExprPtr expr) {
  if (expr->depth > kMaxExpressionDepth) {
    fail("E0214", expr->loc, "expression is nested too deeply",
         "the limit is " + std::to_string(kMaxExpressionDepth) +
             " levels; name intermediate values with `let`");
  }
  return expr;
}

ExprPtr Parser::parse_expr() {
  DepthGuard guard(*this);
  return parse_comparison();
}

// Comparisons do not chain: `a < b < c` is an error.
ExprPtr Parser::parse_comparison() {
  ExprPtr lhs = parse_additive();
  if (auto op = comparison_op(peek().kind)) {
    advance();
    ExprPtr rhs = parse_additive();
    lhs = checked(std::make_shared<BinaryExpr>(join(lhs->loc, rhs->loc), *op, lhs, rhs));
    if (comparison_op(peek().kind)) {
      fail("E0211", peek().loc, "comparisons do not chain", "combine them with `where`");
    }
  }
  return lhs;
}

ExprPtr Parser::parse_additive() {
  ExprPtr lhs = parse_multiplicative();
  while (at(TokenKind::Plus) || at(TokenKind::Minus)) {
    BinaryOp op = advance().kind == TokenKind::Plus ? BinaryOp::Add : BinaryOp::Sub;
    ExprPtr rhs = parse_multiplicative();
    lhs = checked(std::make_shared<BinaryExpr>(join(lhs->loc, rhs->loc), op, lhs, rhs));
  }
  return lhs;
}

ExprPtr Parser::parse_multiplicative() {
  ExprPtr lhs = parse_unary();
  while (auto op = multiplicative_op(peek().kind)) {
    advance();
    ExprPtr rhs = parse_unary();
    lhs = checked(std::make_shared<BinaryExpr>(join(lhs->loc, rhs->loc), *op, lhs, rhs));
  }
  return lhs;
}

ExprPtr Parser::parse_unary() {
  if (at(TokenKind::Minus)) {
    DepthGuard guard(*this);
    uint32_t begin = advance().loc.begin;
    ExprPtr operand = parse_unary();
    return checked(std::make_shared<UnaryExpr>(Loc{begin, operand->loc.end}, operand));
  }
  return parse_postfix();
}

ExprPtr Parser::parse_postfix() {
  ExprPtr expr = parse_primary();
  while (true) {
    // A `(` that begins a line begins a new expression (a body's result tuple), not a call.
    const bool call = at(TokenKind::LeftParen) && position_ > 0 &&
                      source_->text.find('\n', tokens_[position_ - 1].loc.end) >= peek().loc.begin;
    if (call) {
      expr = parse_call(expr);
    } else if (at(TokenKind::LeftBracket)) {
      expr = parse_index(expr);
    } else if (accept(TokenKind::Dot)) {
      Loc name_loc = peek().loc;
      std::string name = expect_name("after `.`");
      expr = std::make_shared<MemberExpr>(join(expr->loc, name_loc), expr, name, name_loc);
    } else {
      return expr;
    }
    checked(expr);
  }
}

// f(a, b, axis: D): positional arguments first, then named ones.
ExprPtr Parser::parse_call(ExprPtr callee) {
  DepthGuard guard(*this);
  advance();
  std::vector<Argument> arguments;
  while (!at(TokenKind::RightParen)) {
    Argument argument;
    if (at(TokenKind::Identifier) && peek(1).kind == TokenKind::Colon) {
      argument.name_loc = peek().loc;
      argument.name = advance().text;
      advance();
    } else if (!arguments.empty() && !arguments.back().name.empty()) {
      fail("E0218", peek().loc, "a positional argument follows a named one",
           "put positional arguments first: f(x, axis: D)");
    }
    argument.value = parse_expr();
    arguments.push_back(std::move(argument));
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RightParen, "to close the call's arguments");
  return std::make_shared<CallExpr>(loc_from(callee->loc.begin), callee, std::move(arguments));
}

// x[a : b, :, i]
ExprPtr Parser::parse_index(ExprPtr object) {
  DepthGuard guard(*this);
  advance();
  std::vector<SliceItem> items;
  while (!at(TokenKind::RightBracket)) {
    SliceItem item;
    item.loc = peek().loc;
    if (!at(TokenKind::Colon)) item.start = parse_expr();
    if (accept(TokenKind::Colon)) {
      item.range = true;
      if (!at(TokenKind::Comma) && !at(TokenKind::RightBracket)) item.stop = parse_expr();
    }
    item.loc = loc_from(item.loc.begin);
    items.push_back(std::move(item));
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RightBracket, "to close the index");
  return std::make_shared<IndexExpr>(loc_from(object->loc.begin), object, std::move(items));
}

ExprPtr Parser::parse_primary() {
  const Token& token = peek();
  switch (token.kind) {
    case TokenKind::Number: {
      advance();
      bool integer = token.text.find_first_of(".eE") == std::string::npos;
      return std::make_shared<NumberExpr>(token.loc, token.text, integer);
    }
    case TokenKind::String: advance(); return std::make_shared<StringExpr>(token.loc, token.text);
    case TokenKind::Identifier: advance(); return std::make_shared<NameExpr>(token.loc, token.text);
    case TokenKind::LeftParen: {
      DepthGuard guard(*this);
      uint32_t begin = advance().loc.begin;
      ExprPtr inner = parse_expr();
      if (!at(TokenKind::Comma)) {
        expect(TokenKind::RightParen, "to close the parenthesis");
        return inner;
      }
      std::vector<ExprPtr> elements{inner};  // (a, b, …): a tuple
      while (accept(TokenKind::Comma) && !at(TokenKind::RightParen)) elements.push_back(parse_expr());
      expect(TokenKind::RightParen, "to close the tuple");
      return checked(std::make_shared<TupleExpr>(loc_from(begin), std::move(elements)));
    }
    case TokenKind::LeftBracket: return parse_list();
    case TokenKind::Fold: return parse_fold();
    default:
      fail("E0212", token.loc, "expected an expression, found " + token_kind_name(token.kind));
  }
}

// [a, b, c]
ExprPtr Parser::parse_list() {
  DepthGuard guard(*this);
  uint32_t begin = advance().loc.begin;
  std::vector<ExprPtr> elements;
  while (!at(TokenKind::RightBracket)) {
    elements.push_back(parse_expr());
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RightBracket, "to close the list");
  return checked(std::make_shared<ListExpr>(loc_from(begin), std::move(elements)));
}

// fold PATH over EXPR
ExprPtr Parser::parse_fold() {
  uint32_t begin = advance().loc.begin;
  std::vector<std::string> path;
  Loc path_loc = peek().loc;
  path.push_back(expect_name("after `fold` (the stacked parameter)"));
  while (accept(TokenKind::Dot)) path.push_back(expect_name("after `.`"));
  path_loc = loc_from(path_loc.begin);
  expect(TokenKind::Over, "after the stacked parameter of `fold`");
  ExprPtr initial = parse_expr();
  return checked(std::make_shared<FoldExpr>(Loc{begin, initial->loc.end}, std::move(path), path_loc, initial));
}

std::vector<ExprPtr> Parser::parse_shape() {
  std::vector<ExprPtr> shape;
  advance();
  while (!at(TokenKind::RightBracket)) {
    shape.push_back(parse_expr());
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RightBracket, "to close the shape");
  return shape;
}

// R | R[T, D] | Z[T + 1] | B[…] | LayerNorm | stack{L} Block
TypeExpr Parser::parse_type() {
  TypeExpr type;
  uint32_t begin = peek().loc.begin;
  if (accept(TokenKind::Stack)) {
    type.kind = TypeExpr::Kind::Stack;
    expect(TokenKind::LeftBrace, "after `stack`");
    type.count = parse_expr();
    expect(TokenKind::RightBrace, "to close the layer count");
    type.name = expect_name("(the stacked module) after `stack{…}`");
  } else if (at(TokenKind::Identifier)) {
    type.name = advance().text;
    bool tensor = type.name == "R" || type.name == "Z" || type.name == "B";
    type.kind = tensor ? TypeExpr::Kind::Tensor : TypeExpr::Kind::Module;
    if (tensor && at(TokenKind::LeftBracket)) type.shape = parse_shape();
  } else {
    fail("E0213", peek().loc, "expected a type, found " + token_kind_name(peek().kind),
         "a type is R[…], Z[…], B[…] (or ℝ ℤ 𝔹), a module's name, or stack{N} Module");
  }
  type.loc = loc_from(begin);
  return type;
}

}  // namespace presk::lang::detail
