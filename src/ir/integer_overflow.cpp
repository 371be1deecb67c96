// The wording of integer_overflow.h.
#include "ir/integer_overflow.h"

#include <string_view>

namespace presk::ir {
namespace {

constexpr std::string_view kGuardSuffix = "_divisor_is_zero";

// The source line of the let's span ("" when it has none).
std::string_view source_line(const Span& span) {
  if (!span.known() || span.begin > span.file->text.size()) return {};
  const std::string_view text = span.file->text;
  const size_t before = text.rfind('\n', span.begin == 0 ? 0 : span.begin - 1);
  const size_t begin = before == std::string_view::npos || span.begin == 0 ? 0 : before + 1;
  const size_t end = text.find('\n', span.begin);
  return text.substr(begin, (end == std::string_view::npos ? text.size() : end) - begin);
}

// The name of the let the line defines when it is an import's zero-divisor guard, else "".
std::string_view guard_name(std::string_view line) {
  const size_t start = line.find_first_not_of(' ');
  if (start == std::string_view::npos || line.substr(start, 4) != "let ") return {};
  const size_t name_begin = start + 4;
  const size_t name_end = line.find(' ', name_begin);
  if (name_end == std::string_view::npos) return {};
  const std::string_view name = line.substr(name_begin, name_end - name_begin);
  const bool guard = name.size() > kGuardSuffix.size() &&
                     name.substr(name.size() - kGuardSuffix.size()) == kGuardSuffix;
  return guard ? name : std::string_view{};
}

// The node the import's comment names (`node "n" (Div)`), or "".
std::string_view node_of(std::string_view line) {
  const size_t at = line.find("# node ");
  if (at == std::string_view::npos) return {};
  const std::string_view rest = line.substr(at + 2);
  return rest.substr(0, rest.find("; site"));
}

}  // namespace

IntegerOverflowText integer_overflow_text(const Let& let, const std::string& operation) {
  const std::string_view line = source_line(let.span);
  const std::string_view guard = guard_name(line);
  if (guard.empty()) {
    return {"integer overflow: " + operation + " lies outside 64 bits",
            "Z values are 64-bit integers: keep them within ±9223372036854775807"};
  }
  const std::string_view node = node_of(line);
  return {"a divisor was zero: the integer division " +
              (node.empty() ? std::string() : "of " + std::string(node) + " ") +
              "met a divisor equal to 0, which ONNX leaves undefined (the guard `" +
              std::string(guard) + "` stops the run there rather than give a quotient)",
          "keep the divisor nonzero: guard it in the model (Where(b == 0, 1, b)) or check the "
          "input data"};
}

}  // namespace presk::ir
