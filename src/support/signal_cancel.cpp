// SignalCancel: sigaction handlers that record the signal and request cancellation.
#include "support/signal_cancel.h"

#include <atomic>
#include <csignal>
#include <cstdlib>

#include "support/cancel.h"

namespace presk {
namespace {

std::atomic<int> signal_received{0};
struct sigaction previous_int, previous_term;

void on_signal(int signal) {
  signal_received.store(signal, std::memory_order_relaxed);
  request_cancel();
}

}  // namespace

SignalCancel::SignalCancel() {
  clear_cancel();
  signal_received.store(0, std::memory_order_relaxed);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second signal is not caught
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
}

SignalCancel::~SignalCancel() {
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
}

int SignalCancel::received() { return signal_received.load(std::memory_order_relaxed); }

const char* SignalCancel::received_name() {
  return received() == SIGINT ? "SIGINT" : received() == SIGTERM ? "SIGTERM" : "no signal";
}

void SignalCancel::reraise() {
  const int signal = received();
  if (signal != 0) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
  std::_Exit(130);
}

}  // namespace presk
