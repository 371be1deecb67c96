// `presk run --exact --out F.safetensors`: the outputs of a reference run written as a
// safetensors file. Each output is one tensor, F64 (every real rounded once, to nearest, from
// the exact value — for a ball its midpoint) or I64 (Z and B), and the exact values ride along
// in the header's `__metadata__` as decimal strings; docs/reference.md states the layout.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "exec/reference/value.h"
#include "ir/ir.h"

namespace presk::reference {

// What produced the outputs, recorded under the metadata key "presk:run" (JSON).
struct RunRecord {
  std::string program;
  std::string entry;
  std::string arith;  // "mpfr" or "ball"
  long bits = 0;
  uint64_t seed = 0;
  int64_t offset = 0;   // first sample
  bool sampled = false; // --samples given: every tensor has a leading sample axis
  std::string weights;  // empty: synthesized
  std::string data;     // empty: synthesized
};

// The tensor name of result k of `entry`: the entry's name for a single result, else
// "<entry>.<k>".
std::string output_name(const ir::Function& entry, size_t k);

// Writes samples[s][k] (sample s, result k) to `path` atomically (codes E0130–E0133).
template <class A>
void write_outputs(const std::string& path, const A& arith, const ir::Function& entry,
                   const std::vector<std::vector<Value<A>>>& samples, const RunRecord& record);

// Digits that identify a `bits`-bit binary number: ⌈bits·log₁₀2⌉ + 1 (read back at `bits`
// with rounding to nearest, the decimal gives the same number).
int exact_digits(long bits);

}  // namespace presk::reference
