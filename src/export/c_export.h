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
};

// The C of `entry` under `realization` (validated against `program`), with API names
// presk_<name>_…; `origin` is written into the files' first comment. Errors: E1540 (no such
// entry), E1541 (an op or type the export does not cover), E1543 (an
// entry or callee with several results), E1545 (a fold whose carried type does not settle).
CExport export_c(const ir::Program& program, const std::string& entry,
                 const exec::native::Realization& realization, const std::string& name,
                 const std::string& origin);

// Whether `name` may name the generated API (a C identifier of letters, digits and `_`).
bool is_c_name(const std::string& name);

}  // namespace presk::export_c
