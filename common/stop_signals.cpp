#include "common/stop_signals.hpp"

#include <signal.h>

#include <atomic>

#include "common/temporary_files.hpp"

namespace fl::common {

namespace {
// Written by the handler, read by the work loop: a lock-free atomic is async-signal-safe.
std::atomic<int> g_received{0};
static_assert(std::atomic<int>::is_always_lock_free);
struct sigaction g_previous_int {
}, g_previous_term{};

extern "C" void on_stop_signal(int signal_number) {
  int expected = 0;
  if (g_received.compare_exchange_strong(expected, signal_number) || expected != signal_number) return;
  // The second of the same kind: end now, as the default action would, but without leaving a temporary
  // file of an atomic write behind (it was SA_RESETHAND, which skipped that).
  remove_temporary_files();
  _exit(exit_code_after_signal(signal_number));
}
}  // namespace

StopOnSignals::StopOnSignals() {
  g_received = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: a blocking read of a compile worker's pipe is interrupted and retried by its caller,
  // which then sees the request. The second signal of the same kind ends the process (on_stop_signal).
  action.sa_flags = 0;
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

StopOnSignals::~StopOnSignals() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

int StopOnSignals::received() {
  return g_received.load();
}

}  // namespace fl::common
