// The IR as JSON, for tools that would rather not parse the printed form
// (`presk dump --stage ir --json`). Informational: it is not read back.
#pragma once

#include <nlohmann/json.hpp>

#include "ir/ir.h"

namespace presk::ir {

nlohmann::json program_json(const Program& program);

}  // namespace presk::ir
