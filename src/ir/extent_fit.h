// When a stored tensor's shape contradicts a parameter's, which binding would make them agree:
// each axis named by a const or dim (`tok : R[V, D]`) whose extent differs becomes
// "V = 80 would fit (the program has V = 73)".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace presk::ir {

// "" when no differing axis is named or the ranks differ; otherwise one clause per differing
// named axis, e.g. "the file fits const V = 80 (the program binds V = 73: `--const V=80`)".
// `program` (may be null) tells a const from a dim.
std::string extent_fit_note(const Type& wanted, const std::vector<int64_t>& found, const Program* program);

}  // namespace presk::ir
