#include "common/utc_time.hpp"

#include <cstdio>
#include <ctime>

namespace fl::common {

std::string iso_utc(std::chrono::system_clock::time_point t, int fraction_digits) {
  auto const ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  long long constexpr kNsPerSecond = 1'000'000'000;
  long long seconds = ns / kNsPerSecond, fraction = ns % kNsPerSecond;
  if (fraction < 0) fraction += kNsPerSecond, --seconds;  // before 1970: the fraction still counts up
  std::time_t const whole = std::time_t(seconds);
  std::tm tm{};
  gmtime_r(&whole, &tm);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  if (fraction_digits <= 0) return std::string(date) + "Z";
  int const digits = fraction_digits > 9 ? 9 : fraction_digits;
  for (int i = digits; i < 9; ++i) fraction /= 10;
  char out[48];
  std::snprintf(out, sizeof out, "%s.%0*lldZ", date, digits, fraction);
  return out;
}

}  // namespace fl::common
