#include "tuner/tune/fault_restart.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace fl::tuner {

namespace {
constexpr char const* kRestartsEnv = "FA_TUNE_FAULT_RESTARTS";
constexpr char const* kChainStartEnv = "FA_TUNE_CHAIN_START_NS";

// The steady clock is CLOCK_MONOTONIC on Linux: one time line for every process of the machine's boot.
long long steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

long long env_number(char const* name) {
  char const* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  long long const value = std::strtoll(text, &end, 10);
  return (*end == '\0' && value >= 0) ? value : -1;  // anything else: as if unset
}
}  // namespace

int fault_restarts_so_far() {
  long long const n = env_number(kRestartsEnv);
  return n < 0 ? 0 : int(std::min<long long>(n, kMaxFaultRestarts));
}

bool fault_restart_left() {
  return fault_restarts_so_far() < kMaxFaultRestarts;
}

double seconds_since_chain_start() {
  long long const start = env_number(kChainStartEnv);
  long long const now = steady_now_ns();
  if (start < 0 || start > now) {  // the first process (or a value from another boot): this is the start
    ::setenv(kChainStartEnv, std::to_string(now).c_str(), 1);
    return 0.0;
  }
  return double(now - start) * 1e-9;
}

void restart_for_fresh_context(char* const argv[], std::string const& culprit) {
  int const next = fault_restarts_so_far() + 1;
  (void)seconds_since_chain_start();  // the chain's start is in the environment before the exec
  std::fprintf(stderr,
               "fa-tune: the GPU context was lost after %s (stored as failed) and cannot be reset in this "
               "process; starting fa-tune again for a fresh context, resuming from the database (restart %d "
               "of at most %d)\n",
               culprit.c_str(), next, kMaxFaultRestarts);
  std::fflush(stdout);
  std::fflush(stderr);
  ::setenv(kRestartsEnv, std::to_string(next).c_str(), 1);
  ::execv("/proc/self/exe", argv);
  std::fprintf(stderr, "fa-tune: could not start again (%s); rerun to resume\n", std::strerror(errno));
}

}  // namespace fl::tuner
