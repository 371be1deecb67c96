// The native executor's worker threads. Every parallel loop of the executor (contraction
// tiles, elementwise chunks, row blocks, bf16 stores) hands its independent tasks to one
// process-wide pool: the calling thread and up to threads − 1 workers claim task indices from
// a shared counter, so which thread runs a task never changes a bit (tasks write disjoint
// outputs). Workers spin for a while after their last task before they sleep: on this
// project's VMs waking a sleeping thread costs 100 µs to milliseconds (docs/performance-history.md), more than
// most of a forward pass's ops take, and a GPT forward runs dozens of parallel ops in a row.
#pragma once

#include <cstddef>

namespace presk::exec::native {

using TaskFn = void (*)(const void* context, size_t task);

// Runs fn(context, t) for every t < count, on the calling thread and up to `threads` − 1 pool
// workers (at most one per further core); returns when all have run. Serial when threads <= 1
// or count <= 1, on one core, and when called from inside a task or while another thread's
// call holds the pool (same results: the tasks are independent).
void run_tasks(size_t count, int threads, TaskFn fn, const void* context);

}  // namespace presk::exec::native
