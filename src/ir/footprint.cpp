// The static element counts of footprint.h.
#include "ir/footprint.h"

#include <algorithm>
#include <limits>
#include <map>

namespace presk::ir {
namespace {

void add(uint64_t& total, int64_t elements) {
  const auto count = static_cast<uint64_t>(elements < 0 ? 0 : elements);
  total = count > std::numeric_limits<uint64_t>::max() - total ? std::numeric_limits<uint64_t>::max() : total + count;
}

uint64_t sum(uint64_t a, uint64_t b) { return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max() : a + b; }

uint64_t elements(const Type& type) { return static_cast<uint64_t>(std::max<int64_t>(type.element_count(), 0)); }

// The peak of footprint.h of `function`, memoised in `peaks` (functions are callees before
// callers, so the recursion ends; a missing callee counts as nothing more).
uint64_t peak_of(const Program& program, const Function& function, std::map<const Function*, uint64_t>& peaks) {
  if (auto found = peaks.find(&function); found != peaks.end()) return found->second;
  peaks[&function] = std::numeric_limits<uint64_t>::max();  // a cycle, were there one: no bound
  const size_t n = function.lets.size();
  std::vector<size_t> last(n, 0);
  for (size_t j = 0; j < n; ++j) {
    last[j] = j;
    for (const ValueRef& ref : function.lets[j].operands) {
      if (ref.kind == ValueRef::Kind::Let) last[ref.index] = std::max(last[ref.index], j);
    }
  }
  for (size_t j = 0; j < n; ++j) {
    if (last[j] == j) last[j] = n;  // a let nothing reads: held to the end
  }
  for (const ValueRef& ref : function.results) {
    if (ref.kind == ValueRef::Kind::Let) last[ref.index] = n;  // returned
  }
  // held[j]: the lets alive while let j is computed, by a difference array over [birth, last].
  std::vector<uint64_t> born(n + 1, 0), died(n + 2, 0);
  for (size_t j = 0; j < n; ++j) {
    born[j] = sum(born[j], elements(function.lets[j].type));
    died[last[j] + 1] = sum(died[last[j] + 1], elements(function.lets[j].type));
  }
  uint64_t held = 0, peak = 0;
  for (size_t j = 0; j < n; ++j) {
    held = sum(held, born[j]) - std::min(sum(held, born[j]), died[j]);
    const Let& let = function.lets[j];
    // Transient copies while let j runs: an operation's converted or packed operands, or an
    // observer's binary64 copies of the value and of its operands (precision/native_sweep.cpp).
    uint64_t at = sum(held, elements(let.type));
    for (const ValueRef& ref : let.operands) {
      const bool is_let = ref.kind == ValueRef::Kind::Let;
      at = sum(at, elements(is_let ? function.lets[ref.index].type : function.argument_types.at(ref.index)));
    }
    if (is_calling(let.op)) {
      if (const Function* callee = program.find_function(let.attrs.callee)) {
        at = sum(at, peak_of(program, *callee, peaks));
        if (is_folding(let.op)) {
          for (const Type& argument : callee->argument_types) at = sum(at, elements(argument));
        }
      }
    }
    peak = std::max(peak, at);
  }
  peaks[&function] = peak;
  return peak;
}

}  // namespace

Footprint footprint(const Program& program, const Function* entry) {
  Footprint result;
  for (const Function& function : program.functions) {
    for (const Let& let : function.lets) add(result.let_elements, let.type.element_count());
  }
  for (const Param& param : program.params) add(result.param_elements, param.type.element_count());
  if (entry != nullptr) {
    std::map<const Function*, uint64_t> peaks;
    result.peak_let_elements = peak_of(program, *entry, peaks);
    for (ValueRef value : entry->results) add(result.result_elements, entry->type_of(value).element_count());
  }
  return result;
}

}  // namespace presk::ir
