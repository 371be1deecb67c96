// The SIGBUS guard of guarded_read.h: one process-wide handler, installed on first use, and a
// per-thread jump target that is set only while a guarded copy runs.
#include "support/guarded_read.h"

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <mutex>

namespace presk {
namespace {

thread_local sigjmp_buf* active_copy = nullptr;
struct sigaction previous_handler {};

// A fault inside a guarded copy jumps back to it; any other fault goes to the handler that was
// there before (by default: the fault repeats and the kernel ends the process, as without us).
void on_bus_error(int signal, siginfo_t* info, void* context) {
  if (active_copy != nullptr) siglongjmp(*active_copy, 1);
  if ((previous_handler.sa_flags & SA_SIGINFO) != 0 && previous_handler.sa_sigaction != nullptr) {
    previous_handler.sa_sigaction(signal, info, context);
    return;
  }
  ::sigaction(SIGBUS, &previous_handler, nullptr);  // SIG_DFL or SIG_IGN, or a plain handler
  if (previous_handler.sa_handler == SIG_DFL) {
    std::raise(signal);  // as the kernel would have: the process ends by SIGBUS
  } else if (previous_handler.sa_handler != SIG_IGN) {
    previous_handler.sa_handler(signal);
  }
}

void install_handler() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = on_bus_error;
    sigemptyset(&action.sa_mask);
    // SA_NODEFER: SIGBUS stays unblocked after the jump, so a second fault is caught too.
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    ::sigaction(SIGBUS, &action, &previous_handler);
  });
}

}  // namespace

bool guarded_copy(void* destination, const void* source, size_t size) {
  if (size == 0) return true;
  install_handler();
  sigjmp_buf target;
  if (sigsetjmp(target, 0) != 0) {
    active_copy = nullptr;
    return false;
  }
  active_copy = &target;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::memcpy(destination, source, size);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  active_copy = nullptr;
  return true;
}

}  // namespace presk
