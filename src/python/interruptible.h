// Long calls of the module: run on a worker thread with the GIL released, while the calling
// thread waits in short slices and, between them, takes the GIL to look for Ctrl-C
// (PyErr_CheckSignals, which runs signal handlers only on Python's main thread). On Ctrl-C it
// requests cancellation (support/cancel.h), waits for the worker to stop at its next check, and
// raises KeyboardInterrupt.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "support/cancel.h"

namespace presk::python {

// Calls now inside run_interruptible, for the module's calls_in_flight() (the test that other
// Python threads run meanwhile).
inline std::atomic<int> calls_in_flight{0};

// A Ctrl-C cancels every call in flight (support/cancel.h's one flag); the flag is cleared only
// when the last of them ends, so a call of another thread that ends meanwhile does not erase the
// interrupt before the interrupted call's worker sees it. The count and the flag change together.
inline std::mutex cancel_mutex;
inline void enter_call() {
  std::lock_guard<std::mutex> lock(cancel_mutex);
  ++calls_in_flight;
}
inline void cancel_calls() {
  std::lock_guard<std::mutex> lock(cancel_mutex);
  request_cancel();
}
inline void leave_call() {
  std::lock_guard<std::mutex> lock(cancel_mutex);
  if (--calls_in_flight == 0) clear_cancel();
}

// Runs `work` (which must not touch Python objects) as described above; returns its result or
// rethrows its exception.
template <class Work>
auto run_interruptible(Work work) -> decltype(work()) {
  using Result = decltype(work());
  std::packaged_task<Result()> task(std::move(work));
  std::future<Result> result = task.get_future();
  bool interrupted = false;
  enter_call();
  std::thread worker(std::move(task));
  for (;;) {
    bool ready = false;
    {
      pybind11::gil_scoped_release release;
      ready = result.wait_for(std::chrono::milliseconds(20)) == std::future_status::ready;
    }
    if (ready) break;
    if (PyErr_CheckSignals() != 0) {  // KeyboardInterrupt (or a handler's exception) is now set
      interrupted = true;
      cancel_calls();
      pybind11::gil_scoped_release release;
      result.wait();
      break;
    }
  }
  worker.join();
  leave_call();
  if (interrupted) throw pybind11::error_already_set();
  return result.get();
}

}  // namespace presk::python
