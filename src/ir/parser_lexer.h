// The tokens of the printed IR and the lexer that cuts a text into them; used only by
// parser.cpp. Malformed tokens are user errors E0400 with a span.
#pragma once

#include <memory>
#include <string>

#include "support/diagnostics.h"

namespace presk::ir::detail {

enum class TokenKind : uint8_t {
  Name,    // [A-Za-z_][A-Za-z0-9_.]*: names, keywords, op names, element kinds
  String,  // "…" with escapes; `text` holds the decoded bytes
  Number,  // an optional '-', then a digit or a letter: "12", "-3", "0.02", "1e-05", "-inf"
  LetRef,  // %12; `text` holds the digits
  ArgRef,  // $0
  At,      // @
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Equals,
  Arrow,
  End,
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;
  uint32_t begin = 0;
  uint32_t end = 0;
};

// A human description of a token for "expected X, found Y".
std::string describe_token(const Token& token);

class Lexer {
 public:
  explicit Lexer(std::shared_ptr<const SourceFile> source) : source_(std::move(source)) {}
  Token next();  // skips blanks, newlines and `#` comments; End at the end of the text

  Span span(uint32_t begin, uint32_t end) const { return Span{source_, begin, end}; }

 private:
  Token lex_string(uint32_t begin);
  Token lex_word(uint32_t begin, TokenKind kind);
  Token lex_reference(uint32_t begin, TokenKind kind);
  [[noreturn]] void malformed(uint32_t begin, uint32_t end, const std::string& message) const;

  std::shared_ptr<const SourceFile> source_;
  uint32_t at_ = 0;
};

}  // namespace presk::ir::detail
