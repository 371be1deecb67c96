// Copies out of a memory-mapped file that survive the file shrinking underneath: a page past
// the file's new end raises SIGBUS, which a handler scoped to the copy turns into `false`
// (the reader then reports E0101) instead of killing presk.
#pragma once

#include <cstddef>

namespace presk {

// Copies `size` bytes from `source` (inside a read-only mapping) to `destination`; false when
// the mapping faulted (SIGBUS) during the copy, with `destination` partly written. A SIGBUS
// outside such a copy keeps its usual effect. Thread-safe; each thread guards its own copies.
bool guarded_copy(void* destination, const void* source, size_t size);

}  // namespace presk
