// The safetensors inputs of a reference run. Parameters (load_weights) come from a file whose layout matches the
// program exactly: one tensor per parameter, named by its path, of the parameter's full shape
// (stack axes first), of a float dtype (F64, F32 or BF16; each value is exact in binary64).
// Anything else is refused with every mismatch named at once, never read at shifted offsets.
#pragma once

#include <string>

#include "exec/reference/parameters.h"
#include "ir/ir.h"

namespace presk::reference {

// E0510 missing tensor, E0511 extra tensor, E0512 shape differs, E0513 not a float dtype
// (plus the file's own codes, E01xx, from support/safetensors.h).
ParameterStore load_weights(const ir::Program& program, const std::string& path);

// The data arguments of `entry` from a safetensors file holding one tensor per argument, named
// by the argument, of its type's shape, or with one more leading axis of samples, of which
// sample `offset` is taken. R arguments need a float dtype, Z and B an integer or BOOL one.
// E0514 missing tensor, E0515 shape differs (or offset beyond the samples), E0516 dtype.
std::vector<HostTensor> load_inputs(const ir::Function& entry, const std::string& path,
                                    int64_t offset);

}  // namespace presk::reference
