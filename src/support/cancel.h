// Cancelling a long computation from outside it: a front (the Python module on Ctrl-C) requests
// cancellation, and the loops of the exact interpreter call check_cancelled() at each let, which
// throws Cancelled. The presk binary never requests it, so its runs never see Cancelled.
#pragma once

#include <atomic>
#include <exception>

namespace presk {

// Thrown by check_cancelled() once cancellation is requested; not a user or an internal error.
struct Cancelled : std::exception {
  const char* what() const noexcept override { return "cancelled"; }
};

namespace detail {
inline std::atomic<bool> cancel_requested{false};
}

// Asks every running check_cancelled() to throw; clear_cancel() before the next computation.
inline void request_cancel() { detail::cancel_requested.store(true, std::memory_order_relaxed); }
inline void clear_cancel() { detail::cancel_requested.store(false, std::memory_order_relaxed); }

// A relaxed load: cheap enough for every let of the exact interpreter.
inline void check_cancelled() {
  if (detail::cancel_requested.load(std::memory_order_relaxed)) throw Cancelled();
}

}  // namespace presk
