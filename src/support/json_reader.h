// Reading JSON that a user hands presk (realizations, envelopes, checkpoint metadata): strict
// RFC 8259 JSON, checked while it parses, and short excerpts of values for messages, so no
// input, however deep or large, crashes presk or floods a message (docs/errors.md, E0010–E0014).
#pragma once

#include <cstddef>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace presk {

// The deepest nesting of objects and lists a user's JSON may have (presk's files need 4).
inline constexpr int kMaxJsonDepth = 64;

// Where a JSON text comes from, and what its own reader calls text that is not JSON.
struct JsonSource {
  std::string origin;        // names the file in messages
  const char* invalid_code;  // the reader's code for a syntax error (E0600, E0901, …)
  std::string hint;          // how to fix a syntax error (may be empty)
};

// Parses `text`. Refuses, with a coded user error naming `source.origin`: a byte-order mark
// (E0013), a comment (E0012), nesting deeper than kMaxJsonDepth (E0010), a key repeated in
// one object (E0011, naming the key), a number beyond binary64's range such as 1e999
// (E0014), and any other syntax error (`source.invalid_code`).
nlohmann::json parse_user_json(std::string_view text, const JsonSource& source);

// A value as compact JSON for a message, cut after about `limit` characters ("…" marks a
// cut); never dumps more than that of a large or deep value.
std::string json_excerpt(const nlohmann::json& value, size_t limit = 64);

// nlohmann's message for a parse error, which quotes the last token read (a whole 50 MB
// string, say), cut after a short prefix.
std::string json_error_detail(const std::exception& error);

// `text` (a key, a name) quoted as a JSON string, cut after `limit` characters.
std::string text_excerpt(std::string_view text, size_t limit = 64);

// A number for a JSON file presk writes: JSON has none for ±∞ or NaN, so they are written as the
// strings "inf", "-inf", "nan" (as envelopes, solve records and reports write them).
template <class Json = nlohmann::json>
Json json_number(double value) {
  if (value != value) return "nan";
  if (value == 1.0 / 0.0) return "inf";
  if (value == -1.0 / 0.0) return "-inf";
  return value;
}

}  // namespace presk
