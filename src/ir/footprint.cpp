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
uint64_t peak_of(const Program& program, const Function& function, std::map<const Function*, uint64_t>& peaks,
                 bool gets_share) {
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
    // A shared `get` (the native executor's) hands on its tuple's element: nothing new.
    const uint64_t size = gets_share && function.lets[j].op == Op::get ? 0 : elements(function.lets[j].type);
    born[j] = sum(born[j], size);
    died[last[j] + 1] = sum(died[last[j] + 1], size);
  }
  uint64_t held = 0, peak = 0;
  for (size_t j = 0; j < n; ++j) {
    held = sum(held, born[j]) - std::min(sum(held, born[j]), died[j]);
    const Let& let = function.lets[j];
    const Function* callee = is_calling(let.op) ? program.find_function(let.attrs.callee) : nullptr;
    // The let and an observer's binary64 copy of it, once it is there.
    uint64_t at = sum(held, elements(let.type));
    if (let.op == Op::call && callee != nullptr) {
      // The callee's results become the let (moved, not copied; an argument returned is
      // copied): while it runs, the let is not yet there and the callee holds its own peak.
      uint64_t running = sum(held - std::min(held, born[j]), peak_of(program, *callee, peaks, gets_share));
      for (const ValueRef& ref : callee->results) {
        if (ref.kind == ValueRef::Kind::Argument) running = sum(running, elements(callee->argument_types.at(ref.index)));
      }
      at = std::max(at, running);
    } else if (let.op != Op::get) {
      // Transient copies while let j runs: an operation's converted or packed operands, or an
      // observer's binary64 copies of its operands (precision/native_sweep.cpp).
      for (const ValueRef& ref : let.operands) {
        const bool is_let = ref.kind == ValueRef::Kind::Let;
        at = sum(at, elements(is_let ? function.lets[ref.index].type : function.argument_types.at(ref.index)));
      }
      if (callee != nullptr) {  // a fold: the layer's peak, its carry and slices beside the stack
        at = sum(at, peak_of(program, *callee, peaks, gets_share));
        for (const Type& argument : callee->argument_types) at = sum(at, elements(argument));
      }
    }
    peak = std::max(peak, at);
  }
  peaks[&function] = peak;
  return peak;
}

}  // namespace

Footprint footprint(const Program& program, const Function* entry, bool gets_share) {
  Footprint result;
  for (const Function& function : program.functions) {
    for (const Let& let : function.lets) add(result.let_elements, let.type.element_count());
  }
  for (const Param& param : program.params) add(result.param_elements, param.type.element_count());
  if (entry != nullptr) {
    std::map<const Function*, uint64_t> peaks;
    result.peak_let_elements = peak_of(program, *entry, peaks, gets_share);
    for (ValueRef value : entry->results) add(result.result_elements, entry->type_of(value).element_count());
  }
  return result;
}

}  // namespace presk::ir
