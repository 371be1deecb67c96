// The lexer: source text → tokens. ASCII and Unicode spellings of the same symbol give the
// same token (ℝ/R, ℤ/Z, 𝔹/B, ·/@, ×/*, ÷//, →/->, ≤/<=, ≥/>=, ≠/!=). Bad input becomes an
// Error token and a coded diagnostic (E0201–E0207); lexing never stops early.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace presk::lang {

enum class TokenKind : uint8_t {
  Identifier, Number, String,
  // Keywords.
  Const, Dim, Module, Param, Fn, Let, Entry, Fold, Over, Stack, Precision,
  // Punctuation and operators.
  LeftParen, RightParen, LeftBracket, RightBracket, LeftBrace, RightBrace,
  Comma, Colon, Semicolon, Assign, Dot, Arrow,
  Plus, Minus, Star, Slash, At,
  Less, LessEqual, Greater, GreaterEqual, EqualEqual, NotEqual,
  Error, End
};

// A byte range [begin, end) of the source.
struct Loc {
  uint32_t begin = 0;
  uint32_t end = 0;
};

struct Token {
  TokenKind kind = TokenKind::End;
  Loc loc;
  std::string text;  // identifier (ℝ → "R"), number as written, string contents
};

// What a token kind is called in messages: "`(`", "identifier", "end of file".
std::string token_kind_name(TokenKind kind);

// The limits of what the lexer accepts (hostile input is an error, never a crash).
inline constexpr size_t kMaxIdentifierLength = 256;
inline constexpr size_t kMaxNumberLength = 64;
inline constexpr size_t kMaxSourceBytes = 64u << 20;

// Every token of `source`, ending with End. Problems are reported to `sink`.
std::vector<Token> lex(const std::shared_ptr<const SourceFile>& source, DiagnosticSink& sink);

}  // namespace presk::lang
