// The memory a run may use: what the machine has available now, and the refusal (E0017) of a
// run whose estimate exceeds it, before the run allocates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace presk {

// MemAvailable of /proc/meminfo, else the free physical pages (sysconf), and at most
// PRESK_MEMORY_LIMIT when it is set (bytes, or with a K, M or G suffix: a share of a machine
// that others use; E1402 when it is not a positive byte count); nullopt when none is known.
std::optional<uint64_t> available_memory();

// E0017 when `needed` bytes exceed the available memory; `what` says what needs them
// ("the exact run of `loss` at 256 bits, 2 samples at once") and `hint` how to need less.
void check_memory(uint64_t needed, const std::string& what, const std::string& hint);

// a · b and a + b, saturating at UINT64_MAX.
uint64_t saturating_product(uint64_t a, uint64_t b);
uint64_t saturating_sum(uint64_t a, uint64_t b);

}  // namespace presk
