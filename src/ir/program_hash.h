// A program's fingerprint: the SHA-256 of its printed IR (ir/printer.h), so two programs with
// the same functions, parameters, consts and dims bound to the same values have the same hash,
// whatever their source's comments and layout. Checkpoints and envelopes record it and refuse
// a program whose hash differs.
#pragma once

#include <string>

#include "ir/ir.h"

namespace presk::ir {

// 64 lowercase hex digits.
std::string program_hash(const Program& program);

}  // namespace presk::ir
