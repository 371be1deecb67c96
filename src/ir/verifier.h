// Checks the IR's invariants: operands refer to arguments or earlier lets, arities match the
// op list, result types follow from operand types and attributes, callees exist and come
// before their callers, parameter paths exist. Run after every pass; a violation is a bug in
// the pass that produced the IR (internal_assert), except for IR read from a file, where it
// is a user error (E04xx).
#pragma once

#include "ir/ir.h"

namespace presk::ir {

enum class VerifyMode { AfterPass, UserInput };
void verify_program(const Program& program, VerifyMode mode = VerifyMode::AfterPass);

}  // namespace presk::ir
