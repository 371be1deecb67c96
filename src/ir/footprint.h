// How many elements a run of a program holds at once, at most, from the IR's static shapes:
// the ground for refusing a run that cannot fit in memory before it allocates (E0017).
#pragma once

#include <cstdint>

#include "ir/ir.h"

namespace presk::ir {

struct Footprint {
  uint64_t let_elements = 0;     // every let of every function, each function's lets once
  uint64_t param_elements = 0;   // every parameter tensor
  uint64_t result_elements = 0;  // the entry's results (one sample's)
};

// Counts saturate at UINT64_MAX. `entry` may be null (no results counted). An upper bound
// for the executors, which hold a function's lets until it returns and run a fold's layers one
// after another: a function called in several places is counted once.
Footprint footprint(const Program& program, const Function* entry);

}  // namespace presk::ir
