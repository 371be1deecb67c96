#include "ir/program_hash.h"

#include "ir/printer.h"
#include "support/sha256.h"

namespace presk::ir {

std::string program_hash(const Program& program) { return sha256_hex(print_program(program)); }

}  // namespace presk::ir
