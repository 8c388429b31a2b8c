#pragma once
// Progress of long work (compiling and timing hundreds of candidates). On a terminal: one line rewritten
// in place with done/total, rate, ETA and the best so far. Not a terminal (CI logs, pipes): plain lines,
// at most one every kPlainInterval, so a log of a long tune stays readable.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

namespace fl::tuner {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  Progress(std::string label, std::size_t total, std::FILE* out, bool is_terminal);
  // Detects whether `out` is a terminal.
  Progress(std::string label, std::size_t total, std::FILE* out = stderr);

  void advance(std::size_t by = 1);
  void set_best(std::string best);  // e.g. "kBlockM=128,kBlockN=64 312 TFLOP/s"
  // A run over many problems: the label says where it is ("problem 2/6 fa2_sm80 ...: candidate 5/168"),
  // done/total and the ETA count the whole run, and the ETA never goes past the run's deadline.
  void set_label(std::string label) { label_ = std::move(label); }
  void set_total(std::size_t total) { total_ = total; }
  void set_deadline(std::optional<Clock::time_point> deadline) { deadline_ = deadline; }
  void finish();

  // The text of the status line at time `now` (exposed for tests).
  std::string status_line(Clock::time_point now) const;

 private:
  void emit(bool force);

  static constexpr std::chrono::seconds kPlainInterval{5};

  std::string label_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::FILE* out_;
  bool is_terminal_;
  std::string best_;
  Clock::time_point start_;
  std::optional<Clock::time_point> last_plain_;
  std::optional<Clock::time_point> deadline_;
};

}  // namespace fl::tuner
