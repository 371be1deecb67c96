// `presk check --precision ENVELOPE PROGRAM --realize R --contract C --measure`: a chip contract's
// gap against the exact meaning on the envelope's samples, product by product (split into
// representation and arithmetic) and cache by cache (numerics/measure.h; docs/chip.md, "Measured").
#pragma once

#include <string>

#include "cli/command.h"
#include "cli/pipeline.h"

namespace presk::cli {

struct ContractCheckOptions {
  std::string envelope;
  std::string program;
  BindingOptions bindings;
  std::string weights;
  std::string realize;
  std::string contract;
};

int run_contract_check(const ContractCheckOptions& options, GlobalOptions& global);

}  // namespace presk::cli
