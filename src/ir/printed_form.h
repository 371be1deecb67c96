// The lexical pieces of the printed IR that the printer writes and the parser reads:
// names (bare or quoted), quoted strings, and types with their axis names.
#pragma once

#include <string>

#include "ir/ir.h"

namespace presk::ir {

// Whether `name` prints bare: [A-Za-z_][A-Za-z0-9_.]*.
bool is_bare_name(const std::string& name);
// `text` in double quotes; `"` and `\` escaped with `\`, other bytes below 0x20 and 0x7f
// as `\xHH`; every other byte (UTF-8 included) as is.
std::string quote_string(const std::string& text);
// A name bare where it can be, quoted otherwise ("" prints as "").
std::string name_text(const std::string& name);
// "R[T:8, D:64]": each extent, with its axis name before a colon where it has one.
std::string type_text(const Type& type);

}  // namespace presk::ir
