// Reads the printed form of the IR (ir/printer.h) back into a Program. Malformed text is a
// user error (E04xx) with a span into `source`.
#pragma once

#include <memory>

#include "ir/ir.h"

namespace presk::ir {

Program parse_program(std::shared_ptr<const SourceFile> source);

}  // namespace presk::ir
