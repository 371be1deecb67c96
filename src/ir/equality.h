// Structural equality of programs, spans excepted: what "parse(print(p)) == p" means.
// A type whose axes are all unnamed equals the same type with no axis names, and a
// function whose arguments are all unnamed equals one with no argument names.
#pragma once

#include <string>

#include "ir/ir.h"

namespace presk::ir {

// "" when `a` and `b` are equal; otherwise where they first differ
// ("function `f`, let %3: attrs differ").
std::string program_difference(const Program& a, const Program& b);

}  // namespace presk::ir
