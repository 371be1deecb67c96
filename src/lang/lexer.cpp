// The lexer: one pass over the bytes, longest match, Unicode symbols folded onto their ASCII
// tokens. Runs of bad bytes give one Error token and one diagnostic each.
#include "lang/lexer.h"

#include <array>
#include <cstring>
#include <string_view>
#include <utility>

namespace presk::lang {
namespace {

struct Keyword {
  std::string_view text;
  TokenKind kind;
};
constexpr std::array kKeywords = {
    Keyword{"const", TokenKind::Const},   Keyword{"dim", TokenKind::Dim},
    Keyword{"module", TokenKind::Module}, Keyword{"param", TokenKind::Param},
    Keyword{"fn", TokenKind::Fn},         Keyword{"let", TokenKind::Let},
    Keyword{"entry", TokenKind::Entry},   Keyword{"fold", TokenKind::Fold},
    Keyword{"over", TokenKind::Over},     Keyword{"stack", TokenKind::Stack},
    Keyword{"precision", TokenKind::Precision},
};

// A non-ASCII symbol of the language: its UTF-8 bytes, its token, and for ℝ ℤ 𝔹 the
// identifier it stands for.
struct UnicodeSymbol {
  std::string_view bytes;
  TokenKind kind;
  std::string_view identifier;
};
constexpr std::array kUnicodeSymbols = {
    UnicodeSymbol{"\u211D", TokenKind::Identifier, "R"},      // ℝ
    UnicodeSymbol{"\u2124", TokenKind::Identifier, "Z"},      // ℤ
    UnicodeSymbol{"\U0001D539", TokenKind::Identifier, "B"},  // 𝔹
    UnicodeSymbol{"\u00B7", TokenKind::At, ""},               // ·
    UnicodeSymbol{"\u00D7", TokenKind::Star, ""},             // ×
    UnicodeSymbol{"\u00F7", TokenKind::Slash, ""},            // ÷
    UnicodeSymbol{"\u2192", TokenKind::Arrow, ""},            // →
    UnicodeSymbol{"\u2264", TokenKind::LessEqual, ""},        // ≤
    UnicodeSymbol{"\u2265", TokenKind::GreaterEqual, ""},     // ≥
    UnicodeSymbol{"\u2260", TokenKind::NotEqual, ""},         // ≠
};

struct Punctuation {
  std::string_view text;
  TokenKind kind;
};
// Two-character operators first: the longest match wins.
constexpr std::array kPunctuation = {
    Punctuation{"->", TokenKind::Arrow},      Punctuation{"<=", TokenKind::LessEqual},
    Punctuation{">=", TokenKind::GreaterEqual}, Punctuation{"==", TokenKind::EqualEqual},
    Punctuation{"!=", TokenKind::NotEqual},   Punctuation{"(", TokenKind::LeftParen},
    Punctuation{")", TokenKind::RightParen},  Punctuation{"[", TokenKind::LeftBracket},
    Punctuation{"]", TokenKind::RightBracket}, Punctuation{"{", TokenKind::LeftBrace},
    Punctuation{"}", TokenKind::RightBrace},  Punctuation{",", TokenKind::Comma},
    Punctuation{":", TokenKind::Colon},       Punctuation{";", TokenKind::Semicolon},
    Punctuation{"=", TokenKind::Assign},      Punctuation{".", TokenKind::Dot},
    Punctuation{"+", TokenKind::Plus},        Punctuation{"-", TokenKind::Minus},
    Punctuation{"*", TokenKind::Star},        Punctuation{"/", TokenKind::Slash},
    Punctuation{"@", TokenKind::At},          Punctuation{"<", TokenKind::Less},
    Punctuation{">", TokenKind::Greater},
};

constexpr int kMaxLexerDiagnostics = 20;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_identifier_char(char c) { return is_identifier_start(c) || is_digit(c); }

class Lexer {
 public:
  Lexer(const std::shared_ptr<const SourceFile>& source, DiagnosticSink& sink)
      : source_(source), text_(source->text), sink_(sink) {}

  std::vector<Token> run() {
    while (true) {
      skip_space_and_comments();
      if (at_ >= text_.size()) break;
      tokens_.push_back(next());
    }
    tokens_.push_back(Token{TokenKind::End, {size(), size()}, ""});
    return std::move(tokens_);
  }

 private:
  uint32_t size() const { return static_cast<uint32_t>(text_.size()); }

  void report(std::string code, Loc loc, std::string message, std::string hint = {}) {
    if (++reported_ > kMaxLexerDiagnostics) return;
    sink_.report(std::move(code), Span{source_, loc.begin, loc.end}, std::move(message),
                 std::move(hint));
  }

  void skip_space_and_comments() {
    while (at_ < text_.size()) {
      char c = text_[at_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++at_;
      } else if (c == '#') {
        while (at_ < text_.size() && text_[at_] != '\n') ++at_;
      } else {
        break;
      }
    }
  }

  Token make(TokenKind kind, uint32_t begin, std::string text = {}) {
    return Token{kind, {begin, at_}, std::move(text)};
  }

  Token next() {
    char c = text_[at_];
    if (is_identifier_start(c)) return identifier();
    if (is_digit(c)) return number();
    if (c == '"') return string();
    uint32_t begin = at_;
    for (const Punctuation& p : kPunctuation) {
      if (text_.compare(at_, p.text.size(), p.text) == 0) {
        at_ += static_cast<uint32_t>(p.text.size());
        return make(p.kind, begin);
      }
    }
    for (const UnicodeSymbol& s : kUnicodeSymbols) {
      if (text_.compare(at_, s.bytes.size(), s.bytes) == 0) {
        at_ += static_cast<uint32_t>(s.bytes.size());
        return make(s.kind, begin, std::string(s.identifier));
      }
    }
    return bad_characters();
  }

  Token identifier() {
    uint32_t begin = at_;
    while (at_ < text_.size() && is_identifier_char(text_[at_])) ++at_;
    std::string_view word(text_.data() + begin, at_ - begin);
    if (word.size() > kMaxIdentifierLength) {
      report("E0205", {begin, at_},
             "identifier of " + std::to_string(word.size()) + " characters is too long",
             "names are at most " + std::to_string(kMaxIdentifierLength) + " characters");
      return make(TokenKind::Error, begin);
    }
    for (const Keyword& k : kKeywords) {
      if (word == k.text) return make(k.kind, begin);
    }
    return make(TokenKind::Identifier, begin, std::string(word));
  }

  void digits() {
    while (at_ < text_.size() && is_digit(text_[at_])) ++at_;
  }

  // digits [ "." digits ] [ ("e" | "E") [ "+" | "-" ] digits ]
  Token number() {
    uint32_t begin = at_;
    bool valid = true;
    digits();
    if (at_ + 1 < text_.size() && text_[at_] == '.' && is_digit(text_[at_ + 1])) {
      ++at_;
      digits();
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      uint32_t exponent = at_;
      digits();
      valid = at_ > exponent;
    }
    if (at_ < text_.size() && is_identifier_char(text_[at_])) {
      while (at_ < text_.size() && is_identifier_char(text_[at_])) ++at_;
      valid = false;
    }
    if (!valid) {
      report("E0203", {begin, at_}, "malformed number `" + text_.substr(begin, std::min<uint32_t>(at_ - begin, 40)) + "`",
             "write a number as 12, 0.5, 1e-5 or 2.5E+3");
      return make(TokenKind::Error, begin);
    }
    if (at_ - begin > kMaxNumberLength) {
      report("E0204", {begin, at_},
             "number literal of " + std::to_string(at_ - begin) + " characters is too long",
             "literals are at most " + std::to_string(kMaxNumberLength) +
                 " characters; use an exponent (1e30)");
      return make(TokenKind::Error, begin);
    }
    return make(TokenKind::Number, begin, text_.substr(begin, at_ - begin));
  }

  Token string() {
    uint32_t begin = at_++;
    while (at_ < text_.size() && text_[at_] != '"' && text_[at_] != '\n') ++at_;
    if (at_ >= text_.size() || text_[at_] != '"') {
      report("E0202", {begin, at_}, "unterminated string", "close the string with `\"` on the same line");
      return make(TokenKind::Error, begin);
    }
    ++at_;
    return make(TokenKind::String, begin, text_.substr(begin + 1, at_ - begin - 2));
  }

  // Length of the UTF-8 sequence starting at `at`, or 0 when it is not valid UTF-8.
  uint32_t utf8_length(uint32_t at) const {
    auto byte = static_cast<unsigned char>(text_[at]);
    uint32_t length = byte >= 0xF0 && byte < 0xF8 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC2 ? 2 : 0;
    if (byte < 0xC2 || at + length > text_.size()) return 0;
    for (uint32_t i = 1; i < length; ++i) {
      if ((static_cast<unsigned char>(text_[at + i]) & 0xC0) != 0x80) return 0;
    }
    return length;
  }

  // A run of characters that start no token, reported once.
  Token bad_characters() {
    uint32_t begin = at_;
    bool invalid_utf8 = false;
    while (at_ < text_.size()) {
      char c = text_[at_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#' || c == '"' ||
          is_identifier_char(c) || starts_token(at_))
        break;
      uint32_t length = static_cast<unsigned char>(c) < 0x80 ? 1 : utf8_length(at_);
      if (length == 0) {
        invalid_utf8 = true;
        length = 1;
      }
      at_ += length;
    }
    if (invalid_utf8) {
      report("E0206", {begin, at_}, "the source is not valid UTF-8 here",
             "save the file as UTF-8 text");
    } else {
      report("E0201", {begin, at_}, "unexpected character `" + text_.substr(begin, std::min<uint32_t>(at_ - begin, 16)) + "`",
             "presk accepts ASCII and the symbols ℝ ℤ 𝔹 · × ÷ → ≤ ≥ ≠; `#` starts a comment");
    }
    return make(TokenKind::Error, begin);
  }

  bool starts_token(uint32_t at) const {
    for (const Punctuation& p : kPunctuation) {
      if (text_.compare(at, p.text.size(), p.text) == 0) return true;
    }
    for (const UnicodeSymbol& s : kUnicodeSymbols) {
      if (text_.compare(at, s.bytes.size(), s.bytes) == 0) return true;
    }
    return false;
  }

  const std::shared_ptr<const SourceFile>& source_;
  const std::string& text_;
  DiagnosticSink& sink_;
  std::vector<Token> tokens_;
  uint32_t at_ = 0;
  int reported_ = 0;
};

}  // namespace

std::string token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::Identifier: return "a name";
    case TokenKind::Number: return "a number";
    case TokenKind::String: return "a string";
    case TokenKind::Error: return "a malformed token";
    case TokenKind::End: return "the end of the file";
    default: break;
  }
  std::string_view text = "token";
  for (const Keyword& k : kKeywords) text = k.kind == kind ? k.text : text;
  for (const Punctuation& p : kPunctuation) text = p.kind == kind ? p.text : text;
  std::string quoted(1, '`');
  quoted.append(text);
  quoted.push_back('`');
  return quoted;
}

std::vector<Token> lex(const std::shared_ptr<const SourceFile>& source, DiagnosticSink& sink) {
  if (source->text.size() > kMaxSourceBytes) {
    sink.report("E0207", Span{source, 0, 0},
                "the source is " + std::to_string(source->text.size()) + " bytes, too large",
                "a program is at most " + std::to_string(kMaxSourceBytes >> 20) + " MiB");
    return {Token{TokenKind::End, {0, 0}, ""}};
  }
  return Lexer(source, sink).run();
}

}  // namespace presk::lang
