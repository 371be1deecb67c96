// Diagnostics: user errors carry a code (E####), a message, an optional hint and an
// optional source span; internal_assert marks a bug in presk itself. Every code is listed
// in docs/errors.md with its meaning, an example and the fix.
#pragma once

#include <cstdint>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace presk {

// A source text that spans point into; shared so diagnostics outlive the parser.
struct SourceFile {
  std::string path;
  std::string text;
};

// A half-open byte range [begin, end) of a source file; an empty file means "no location".
struct Span {
  std::shared_ptr<const SourceFile> file;
  uint32_t begin = 0;
  uint32_t end = 0;

  bool known() const { return file != nullptr; }
};

struct Diagnostic {
  std::string code;     // "E0201"
  std::string message;  // what is wrong
  std::string hint;     // how to fix it (may be empty)
  Span span;            // where (may be unknown)
};

// Renders `file:line:col: error[E0201]: message`, the source line, a caret under the span
// and the hint, or `error[E0201]: message` when the span is unknown.
std::string format_diagnostic(const Diagnostic& diagnostic);

// A user error: bad input, never a bug. Holds one or more diagnostics (the front end
// reports several at once). The CLI prints them all and exits with status 1.
class UserError : public std::runtime_error {
 public:
  explicit UserError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  const std::string& code() const { return diagnostics_.front().code; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// A user error in the command line itself (a malformed or contradictory option, docs/cli.md):
// the CLI prints it and exits with status 2.
class UsageError : public UserError {
 public:
  using UserError::UserError;
};

// A bug in presk. The CLI prints it and exits with status 3; tests fail when one fires.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Builds and throws a UserError with a streamed message:
//   user_error("E0102", span) << "tensor `" << name << "` ends past the file";
//   user_error("E0102").hint("re-export the file") << "...";
// The error is thrown when the temporary is destroyed at the end of the statement.
class UserErrorBuilder {
 public:
  UserErrorBuilder(std::string code, Span span = {}, bool usage = false) : usage_(usage) {
    diagnostic_.code = std::move(code);
    diagnostic_.span = std::move(span);
  }
  UserErrorBuilder(const UserErrorBuilder&) = delete;
  UserErrorBuilder& operator=(const UserErrorBuilder&) = delete;
  [[noreturn]] ~UserErrorBuilder() noexcept(false);

  UserErrorBuilder& hint(std::string text) {
    diagnostic_.hint = std::move(text);
    return *this;
  }
  template <typename T>
  UserErrorBuilder& operator<<(const T& value) {
    message_ << value;
    return *this;
  }

 private:
  Diagnostic diagnostic_;
  std::ostringstream message_;
  bool usage_ = false;  // throws a UsageError
};

inline UserErrorBuilder user_error(std::string code, Span span = {}) {
  return UserErrorBuilder(std::move(code), std::move(span));
}

// The same for an error of the command line: throws a UsageError (exit status 2).
inline UserErrorBuilder usage_error(std::string code) { return UserErrorBuilder(std::move(code), {}, true); }

// Collects diagnostics so a pass can report several before stopping.
class DiagnosticSink {
 public:
  void report(Diagnostic diagnostic) { diagnostics_.push_back(std::move(diagnostic)); }
  void report(std::string code, Span span, std::string message, std::string hint = {}) {
    report(Diagnostic{std::move(code), std::move(message), std::move(hint), std::move(span)});
  }
  bool has_errors() const { return !diagnostics_.empty(); }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  // Throws a UserError holding everything reported so far, if anything was.
  void throw_if_errors() const;

 private:
  std::vector<Diagnostic> diagnostics_;
};

[[noreturn]] void internal_failure(const char* file, int line, const char* condition,
                                   const std::string& detail = {});

}  // namespace presk

// A condition that only a bug in presk can violate.
#define internal_assert(condition)                                          \
  do {                                                                      \
    if (!(condition)) ::presk::internal_failure(__FILE__, __LINE__, #condition); \
  } while (0)
