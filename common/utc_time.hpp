#pragma once
// A time point as ISO 8601 UTC with a fraction of a second: "2026-11-29T16:45:03.123Z" (3 digits, the
// database's measured_at) or "...03.123456Z" (6, fa-bench --samples, which lines runs up with 100 ms
// nvidia-smi samples). One formatter, so that every stored and written time parses the same way.
#include <chrono>
#include <string>

namespace fl::common {

// fraction_digits: 0..9 (digits past the second, truncated, not rounded).
std::string iso_utc(std::chrono::system_clock::time_point t, int fraction_digits);

}  // namespace fl::common
