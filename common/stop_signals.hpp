#pragma once
// SIGINT and SIGTERM as a request to stop at the next safe boundary (a candidate or a row), not as the end
// of the process: a long command finishes the work in flight, stores it, prints what exists and exits
// 128 + signal (130 for Ctrl-C, 143 for SIGTERM). A second signal of the same kind ends the process at once
// (SA_RESETHAND), so a user who presses Ctrl-C twice is never kept waiting.
#include <csignal>

namespace fl::common {

class StopOnSignals {
 public:
  StopOnSignals();   // installs the handlers (and clears an earlier request)
  ~StopOnSignals();  // restores the handlers that were there before
  StopOnSignals(StopOnSignals const&) = delete;
  StopOnSignals& operator=(StopOnSignals const&) = delete;

  // 0, or the first signal received since the handlers were installed.
  static int received();
};

// "SIGINT", "SIGTERM" (the two a command stops on), else "signal": for the "interrupted" lines and JSON.
constexpr char const* stop_signal_name(int signal_number) {
  return signal_number == SIGINT ? "SIGINT" : signal_number == SIGTERM ? "SIGTERM" : "signal";
}

// The exit code of a command stopped by `signal_number`, as a shell reports a process killed by it.
constexpr int exit_code_after_signal(int signal_number) {
  return 128 + signal_number;
}

}  // namespace fl::common
