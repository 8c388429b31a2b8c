#include "tuner/report/progress.hpp"

#include <unistd.h>

#include <cmath>

namespace fl::tuner {

Progress::Progress(std::string label, std::size_t total, std::FILE* out, bool is_terminal)
    : label_(std::move(label)), total_(total), out_(out), is_terminal_(is_terminal), start_(Clock::now()) {}

Progress::Progress(std::string label, std::size_t total, std::FILE* out)
    : Progress(std::move(label), total, out, isatty(fileno(out)) != 0) {}

std::string Progress::status_line(Clock::time_point now) const {
  double const elapsed = std::chrono::duration<double>(now - start_).count();
  double const rate = elapsed > 0.0 ? double(done_) / elapsed : 0.0;
  char buffer[256];
  int n = std::snprintf(buffer, sizeof buffer, "%s %zu/%zu", label_.c_str(), done_, total_);
  std::string line(buffer, std::size_t(n));
  if (done_ > 0 && rate > 0.0) {
    double eta = double(total_ - std::min(done_, total_)) / rate;
    if (deadline_)
      eta = std::min(eta, std::max(0.0, std::chrono::duration<double>(*deadline_ - now).count()));
    n = std::snprintf(buffer, sizeof buffer, "  %.2f/s  ETA %.0fs", rate, std::ceil(eta));
    line.append(buffer, std::size_t(n));
  }
  if (!best_.empty()) line += "  best: " + best_;
  return line;
}

void Progress::emit(bool force) {
  auto const now = Clock::now();
  if (is_terminal_) {
    std::fprintf(out_, "\r\033[K%s", status_line(now).c_str());
    std::fflush(out_);
    return;
  }
  if (!force && last_plain_ && now - *last_plain_ < kPlainInterval) return;
  last_plain_ = now;
  std::fprintf(out_, "%s\n", status_line(now).c_str());
}

void Progress::advance(std::size_t by) {
  done_ += by;
  emit(done_ >= total_);
}

void Progress::set_best(std::string best) {
  best_ = std::move(best);
}

void Progress::finish() {
  if (is_terminal_) {
    emit(true);
    std::fputc('\n', out_);
  } else if (!last_plain_ || done_ < total_) {
    emit(true);
  }
}

}  // namespace fl::tuner
