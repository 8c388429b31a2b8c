#pragma once
// SIGINT and SIGTERM, handled the same way by every command:
//  - a command with boundaries (fa-tune's candidates, fa-mutate's mutants) installs finish_current: the
//    first signal only sets a flag, the loop stops at its next boundary, stores what is finished, prints
//    what it has and exits 128 + the signal (130 for SIGINT, 143 for SIGTERM);
//  - any command, on a second signal or in exit_now mode, ends at once with that exit code.
// Either way no temporary file of an atomic write (common/atomic_file) survives: each one is registered
// here while it exists, and the handler unlinks it (unlink and _exit are async-signal-safe).
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <string>

namespace fl::common {

enum class OnStop { finish_current, exit_now };

namespace stop_detail {
inline constexpr std::size_t kSlots = 32;        // temporary files open at once, over all threads
inline constexpr std::size_t kPathBytes = 4096;  // PATH_MAX on Linux
inline constexpr int kSignalExitBase = 128;      // the shell's convention: 128 + signal number
struct Slot {
  std::atomic<bool> claimed{false};  // owned by one TemporaryFile
  std::atomic<bool> ready{false};    // path holds a name the handler may unlink
  char path[kPathBytes] = {};
};
inline std::array<Slot, kSlots> slots;
inline std::atomic<int> received{0};
inline std::atomic<OnStop> mode{OnStop::exit_now};

inline void remove_temporaries() noexcept {
  for (auto& slot : slots)
    if (slot.ready.load(std::memory_order_acquire)) ::unlink(slot.path);
}

extern "C" inline void on_stop_signal(int signal_number) {
  int const earlier = received.exchange(signal_number);
  if (mode.load() == OnStop::finish_current && earlier == 0) return;  // the loop sees the flag
  remove_temporaries();
  ::_exit(kSignalExitBase + signal_number);
}
}  // namespace stop_detail

inline void install_stop_handlers(OnStop on_stop) {
  stop_detail::mode.store(on_stop);
  struct sigaction action {};
  action.sa_handler = stop_detail::on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM}) ::sigaction(s, &action, nullptr);
}

inline bool stop_requested() noexcept {
  return stop_detail::received.load() != 0;
}
inline int stop_exit_code() noexcept {
  int const s = stop_detail::received.load();
  return s == 0 ? 0 : stop_detail::kSignalExitBase + s;
}
inline std::string stop_signal_name() {
  int const s = stop_detail::received.load();
  return s == SIGINT ? "SIGINT" : s == SIGTERM ? "SIGTERM" : "signal " + std::to_string(s);
}

// Registers a temporary file for removal by the signal handler while it exists; the destructor removes
// the file unless release() was called (after the rename that makes it the real file).
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path) : path_(std::move(path)) {
    if (path_.size() >= stop_detail::kPathBytes) return;
    for (auto& slot : stop_detail::slots) {
      bool expected = false;
      if (!slot.claimed.compare_exchange_strong(expected, true)) continue;
      std::memcpy(slot.path, path_.c_str(), path_.size() + 1);
      slot.ready.store(true, std::memory_order_release);
      slot_ = &slot;
      break;
    }
  }
  ~TemporaryFile() {
    if (!released_) ::unlink(path_.c_str());
    free_slot();
  }
  TemporaryFile(TemporaryFile const&) = delete;
  TemporaryFile& operator=(TemporaryFile const&) = delete;

  std::string const& path() const { return path_; }
  void release() {
    released_ = true;
    free_slot();
  }

 private:
  void free_slot() {
    if (!slot_) return;
    slot_->ready.store(false, std::memory_order_release);
    slot_->claimed.store(false, std::memory_order_release);
    slot_ = nullptr;
  }

  std::string path_;
  stop_detail::Slot* slot_ = nullptr;
  bool released_ = false;
};

}  // namespace fl::common
