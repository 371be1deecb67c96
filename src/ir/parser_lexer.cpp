// Cuts the printed IR into tokens (parser_lexer.h).
#include "ir/parser_lexer.h"

namespace presk::ir::detail {
namespace {

// A token longer than this is hostile input, not IR (names and numbers are short).
constexpr uint32_t kMaxTokenBytes = 1 << 16;

bool is_letter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string describe_token(const Token& token) {
  switch (token.kind) {
    case TokenKind::End:
      return "the end of the text";
    case TokenKind::String:
      return "a string";
    case TokenKind::LetRef:
      return "`%" + token.text + "`";
    case TokenKind::ArgRef:
      return "`$" + token.text + "`";
    default:
      break;
  }
  std::string text = token.text.size() > 40 ? token.text.substr(0, 40) + "…" : token.text;
  return "`" + text + "`";
}

void Lexer::malformed(uint32_t begin, uint32_t end, const std::string& message) const {
  user_error("E0400", span(begin, end)) << message;
}

Token Lexer::next() {
  const std::string& text = source_->text;
  while (at_ < text.size()) {
    char c = text[at_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++at_;
    } else if (c == '#') {
      while (at_ < text.size() && text[at_] != '\n') ++at_;
    } else {
      break;
    }
  }
  uint32_t begin = at_;
  if (at_ >= text.size()) return Token{TokenKind::End, "", begin, begin};
  char c = text[at_];
  if (c == '"') return lex_string(begin);
  if (is_letter(c)) return lex_word(begin, TokenKind::Name);
  if (is_digit(c)) return lex_word(begin, TokenKind::Number);
  if (c == '-' && at_ + 1 < text.size() && text[at_ + 1] == '>') {
    at_ += 2;
    return Token{TokenKind::Arrow, "->", begin, at_};
  }
  if (c == '-' && at_ + 1 < text.size() && (is_digit(text[at_ + 1]) || is_letter(text[at_ + 1]))) {
    return lex_word(begin, TokenKind::Number);
  }
  if (c == '%') return lex_reference(begin, TokenKind::LetRef);
  if (c == '$') return lex_reference(begin, TokenKind::ArgRef);
  static const std::pair<char, TokenKind> kPunctuation[] = {
      {'@', TokenKind::At},       {'(', TokenKind::LParen},   {')', TokenKind::RParen},
      {'[', TokenKind::LBracket}, {']', TokenKind::RBracket}, {'{', TokenKind::LBrace},
      {'}', TokenKind::RBrace},   {',', TokenKind::Comma},    {':', TokenKind::Colon},
      {'=', TokenKind::Equals}};
  for (const auto& [character, kind] : kPunctuation) {
    if (c == character) {
      ++at_;
      return Token{kind, std::string(1, c), begin, at_};
    }
  }
  malformed(begin, begin + 1, "unexpected character in printed IR");
}

// Names: letters, digits, '_' and '.'; numbers also take a sign after an exponent 'e'.
Token Lexer::lex_word(uint32_t begin, TokenKind kind) {
  const std::string& text = source_->text;
  at_ = begin + 1;
  while (at_ < text.size()) {
    char c = text[at_];
    bool exponent_sign = kind == TokenKind::Number && (c == '+' || c == '-') &&
                         (text[at_ - 1] == 'e' || text[at_ - 1] == 'E');
    if (!is_letter(c) && !is_digit(c) && c != '.' && !exponent_sign) break;
    ++at_;
    if (at_ - begin > kMaxTokenBytes) malformed(begin, at_, "a token longer than 65536 bytes");
  }
  return Token{kind, text.substr(begin, at_ - begin), begin, at_};
}

Token Lexer::lex_reference(uint32_t begin, TokenKind kind) {
  const std::string& text = source_->text;
  at_ = begin + 1;
  while (at_ < text.size() && is_digit(text[at_]) && at_ - begin <= 10) ++at_;
  if (at_ == begin + 1) malformed(begin, at_, "`%` and `$` are followed by a number");
  if (at_ < text.size() && is_digit(text[at_])) {
    user_error("E0402", span(begin, at_ + 1)) << "a value number of more than 10 digits";
  }
  return Token{kind, text.substr(begin + 1, at_ - begin - 1), begin, at_};
}

Token Lexer::lex_string(uint32_t begin) {
  const std::string& text = source_->text;
  std::string decoded;
  at_ = begin + 1;
  while (true) {
    if (at_ >= text.size() || text[at_] == '\n') malformed(begin, at_, "unterminated string");
    if (at_ - begin > kMaxTokenBytes) malformed(begin, at_, "a string longer than 65536 bytes");
    char c = text[at_++];
    if (c == '"') break;
    if (c != '\\') {
      decoded += c;
      continue;
    }
    char escaped = at_ < text.size() ? text[at_] : '\0';
    if (escaped == '"' || escaped == '\\') {
      decoded += escaped;
      ++at_;
    } else if (escaped == 'x' && at_ + 2 < text.size() && hex_value(text[at_ + 1]) >= 0 &&
               hex_value(text[at_ + 2]) >= 0) {
      decoded += static_cast<char>(hex_value(text[at_ + 1]) * 16 + hex_value(text[at_ + 2]));
      at_ += 3;
    } else {
      malformed(at_ - 1, at_ + 1, "unknown escape in a string (use \\\", \\\\ or \\xHH)");
    }
  }
  return Token{TokenKind::String, std::move(decoded), begin, at_};
}

}  // namespace presk::ir::detail
