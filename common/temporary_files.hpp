#pragma once
// Temporary files that never outlive the process, whatever ends it: each one (common/atomic_file's
// "<name>.tmp<pid>") is registered here while it exists, and a signal handler that ends the process
// removes them first (unlink and _exit are async-signal-safe).
//  - exit_on_signals(): for a command (or the part of one) without boundaries to stop at (fa-bench,
//    fa-fp8-report; fa-check and fa-mutate while they parse and load), SIGINT and SIGTERM end it at once
//    with 128 + the signal (130, 143), temporaries gone;
//  - common/stop_signals.hpp (fa-tune, fa-mutate's campaign, fa-check's check): the first signal is a
//    request to stop at the next boundary, a second of the same kind ends the process through
//    remove_temporary_files() and _exit.
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <string>

namespace fl::common {

namespace temporary_detail {
inline constexpr std::size_t kSlots = 32;        // temporary files open at once, over all threads
inline constexpr std::size_t kPathBytes = 4096;  // PATH_MAX on Linux
struct Slot {
  std::atomic<bool> claimed{false};  // owned by one TemporaryFile
  std::atomic<bool> ready{false};    // path holds a name the handler may unlink
  char path[kPathBytes] = {};
};
inline std::array<Slot, kSlots> slots;

extern "C" inline void exit_on_signal(int signal_number);
}  // namespace temporary_detail

// Async-signal-safe: unlinks every registered temporary file.
inline void remove_temporary_files() noexcept {
  for (auto& slot : temporary_detail::slots)
    if (slot.ready.load(std::memory_order_acquire)) ::unlink(slot.path);
}

extern "C" inline void temporary_detail::exit_on_signal(int signal_number) {
  remove_temporary_files();
  ::_exit(128 + signal_number);  // the shell's convention for a process ended by a signal
}

inline void exit_on_signals() {
  struct sigaction action {};
  action.sa_handler = temporary_detail::exit_on_signal;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM}) ::sigaction(s, &action, nullptr);
}

// Registers a temporary file for removal by the signal handler while it exists; the destructor removes
// the file unless release() was called (after the rename that makes it the real file).
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path) : path_(std::move(path)) {
    if (path_.size() >= temporary_detail::kPathBytes) return;
    for (auto& slot : temporary_detail::slots) {
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
  temporary_detail::Slot* slot_ = nullptr;
  bool released_ = false;
};

}  // namespace fl::common
