// Names, strings and types as the printed IR writes them (docs/ir.md).
#include "ir/printed_form.h"

#include <sstream>

namespace presk::ir {
namespace {

bool is_name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

}  // namespace

bool is_bare_name(const std::string& name) {
  if (name.empty() || !is_name_start(name[0])) return false;
  for (char c : name) {
    if (!is_name_start(c) && !(c >= '0' && c <= '9') && c != '.') return false;
  }
  return true;
}

std::string quote_string(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string quoted = "\"";
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      quoted += "\\x";
      quoted += kHex[byte >> 4];
      quoted += kHex[byte & 15];
    } else {
      quoted += c;
    }
  }
  return quoted + '"';
}

std::string name_text(const std::string& name) {
  return is_bare_name(name) ? name : quote_string(name);
}

std::string type_text(const Type& type) {
  std::ostringstream out;
  if (type.is_tuple()) {
    out << '(';
    for (size_t i = 0; i < type.elements.size(); ++i)
      out << (i ? ", " : "") << type_text(type.elements[i]);
    out << ')';
    return out.str();
  }
  out << elem_kind_name(type.kind);
  if (type.shape.empty()) return out.str();
  out << '[';
  for (size_t i = 0; i < type.shape.size(); ++i) {
    out << (i ? ", " : "");
    if (i < type.axes.size() && !type.axes[i].empty()) out << name_text(type.axes[i]) << ':';
    out << type.shape[i];
  }
  out << ']';
  return out.str();
}

}  // namespace presk::ir
