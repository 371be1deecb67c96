// Formatting and throwing of user errors and internal failures.
#include "support/diagnostics.h"

#include <algorithm>

namespace presk {
namespace {

struct LineColumn {
  uint32_t line = 1;       // 1-based
  uint32_t column = 1;     // 1-based, in bytes
  uint32_t line_begin = 0;
  uint32_t line_end = 0;
};

LineColumn locate(const std::string& text, uint32_t offset) {
  LineColumn where;
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text.size()));
  for (uint32_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++where.line;
      where.line_begin = i + 1;
    }
  }
  where.column = offset - where.line_begin + 1;
  size_t end = text.find('\n', where.line_begin);
  where.line_end = static_cast<uint32_t>(end == std::string::npos ? text.size() : end);
  return where;
}

std::string summarize(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const Diagnostic& d : diagnostics) {
    if (!text.empty()) text += '\n';
    text += format_diagnostic(d);
  }
  return text;
}

}  // namespace

std::string format_diagnostic(const Diagnostic& diagnostic) {
  std::ostringstream out;
  if (!diagnostic.span.known()) {
    out << "error[" << diagnostic.code << "]: " << diagnostic.message;
  } else {
    const SourceFile& file = *diagnostic.span.file;
    LineColumn where = locate(file.text, diagnostic.span.begin);
    out << file.path << ':' << where.line << ':' << where.column << ": error["
        << diagnostic.code << "]: " << diagnostic.message << '\n';
    // Long lines (a minified or hostile file) are shown around the column only.
    constexpr uint32_t kShown = 160;
    uint32_t from = where.line_begin;
    if (where.column > kShown) from = diagnostic.span.begin - kShown / 2;
    uint32_t to = std::min(where.line_end, from + kShown);
    std::string line = file.text.substr(from, to - from);
    for (char& c : line) {
      if (c == '\t') c = ' ';
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    }
    uint32_t caret_at = std::min<uint32_t>(diagnostic.span.begin - from, line.size());
    uint32_t width = std::max<uint32_t>(1, std::min(diagnostic.span.end, to) -
                                               std::min(diagnostic.span.begin, to));
    out << "  | " << line << '\n' << "  | " << std::string(caret_at, ' ') << std::string(width, '^');
  }
  if (!diagnostic.hint.empty()) out << "\n  hint: " << diagnostic.hint;
  return out.str();
}

UserError::UserError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(summarize(diagnostics)), diagnostics_(std::move(diagnostics)) {
  if (diagnostics_.empty()) internal_failure(__FILE__, __LINE__, "a UserError has a diagnostic");
}

UserErrorBuilder::~UserErrorBuilder() noexcept(false) {
  diagnostic_.message = message_.str();
  if (usage_) throw UsageError({std::move(diagnostic_)});
  throw UserError({std::move(diagnostic_)});
}

void DiagnosticSink::throw_if_errors() const {
  if (!diagnostics_.empty()) throw UserError(diagnostics_);
}

void internal_failure(const char* file, int line, const char* condition,
                      const std::string& detail) {
  std::string message = std::string("internal error (a bug in presk) at ") + file + ":" +
                        std::to_string(line) + ": " + condition + " failed";
  if (!detail.empty()) message += ": " + detail;
  throw InternalError(message);
}

}  // namespace presk
