// `presk export c`: an entry of a program under a realization as C99 source that computes the
// native executor's bits (docs/export.md). One generated function per (IR function, module
// context, argument types); parameters read from a safetensors file at run time.
#pragma once

#include <string>

#include "exec/native/realization.h"
#include "ir/ir.h"

namespace presk::export_c {

struct CExport {
  std::string header;  // <name>.h: the API
  std::string source;  // <name>.c: the runtime, the entry's functions, a driver under PRESK_MAIN
  std::string generate;  // a decode entry's generate.c: the greedy generation loop (else empty)
};

// The C of `entry` under `realization` (validated against `program`), with API names
// presk_<name>_…; `origin` is written into the files' first comment. A decode entry
// (`decode(states…, at : Z, token : Z[1]) -> (R[1, V], states…)`, docs/language.md) gets the
// step API (a state of caches written in place) and generate.c. Errors: E1540 (no such
// entry), E1541 (an op or type the export does not cover), E1543 (an entry with several results
// of another form), E1545 (a fold whose carried type does not settle), E1547 (a cache not written
// in place).
CExport export_c(const ir::Program& program, const std::string& entry,
                 const exec::native::Realization& realization, const std::string& name,
                 const std::string& origin);

// Whether `name` may name the generated API (a C identifier of letters, digits and `_`).
bool is_c_name(const std::string& name);

}  // namespace presk::export_c
