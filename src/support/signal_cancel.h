// SIGINT and SIGTERM as a cancellation (cancel.h): while a SignalCancel lives, either signal
// requests cancellation instead of ending the process, so that a long write stops at its next
// check_cancelled() and its AtomicFileWriter removes the temporary. A second signal ends the
// process at once (the default disposition is restored by the first).
#pragma once

namespace presk {

class SignalCancel {
 public:
  SignalCancel();  // clears any earlier request
  ~SignalCancel();  // restores the dispositions found
  SignalCancel(const SignalCancel&) = delete;
  SignalCancel& operator=(const SignalCancel&) = delete;

  // The signal that requested cancellation (0: none), and its name ("SIGINT", "SIGTERM").
  static int received();
  static const char* received_name();
  // Ends the process by the signal received, as if it had not been caught (exit status 128 + n).
  [[noreturn]] void reraise();
};

}  // namespace presk
