// The static element counts of footprint.h.
#include "ir/footprint.h"

#include <limits>

namespace presk::ir {
namespace {

void add(uint64_t& total, int64_t elements) {
  const auto count = static_cast<uint64_t>(elements < 0 ? 0 : elements);
  total = count > std::numeric_limits<uint64_t>::max() - total ? std::numeric_limits<uint64_t>::max() : total + count;
}

}  // namespace

Footprint footprint(const Program& program, const Function* entry) {
  Footprint result;
  for (const Function& function : program.functions) {
    for (const Let& let : function.lets) add(result.let_elements, let.type.element_count());
  }
  for (const Param& param : program.params) add(result.param_elements, param.type.element_count());
  if (entry != nullptr) {
    for (ValueRef value : entry->results) add(result.result_elements, entry->type_of(value).element_count());
  }
  return result;
}

}  // namespace presk::ir
