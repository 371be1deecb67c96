// The printed form of the IR: a readable text that ir/parser.h reads back to the same
// Program (print ∘ parse ∘ print is the identity). docs/ir.md describes the format.
#pragma once

#include <string>

#include "ir/ir.h"

namespace presk::ir {

std::string print_program(const Program& program);
std::string print_function(const Function& function);

}  // namespace presk::ir
