// Which stored values read each value at their edge: a value of type a read by a site of a
// narrower type b is rounded once into b there (docs/semantics.md, "A site's type"), so the
// estimate charges a value at the narrowest of its own type and its readers' (offer.h). Found
// by following the IR from the entry through fields (param lets), calls and folds: a call
// hands its operands to the callee's arguments and the callee's result to the call's readers;
// a fold hands each layer's result to the next layer's argument too.
#pragma once

#include <map>
#include <set>
#include <string>

#include "ir/ir.h"

namespace presk::solve {

struct ReaderMap {
  std::map<std::string, std::set<std::string>> of_site;       // site name → reading site names
  std::map<std::string, std::set<std::string>> of_parameter;  // full path → reading site names
};

// The readers of every typable site and every parameter reached from `entry` (sites named
// "<function>/%<n>", readers typable sites: exec::native::is_typable).
ReaderMap find_readers(const ir::Program& program, const ir::Function& entry);

}  // namespace presk::solve
