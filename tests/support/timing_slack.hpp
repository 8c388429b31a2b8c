#pragma once
// Wall-clock bounds in tests are set for the plain build; AddressSanitizer and UndefinedBehaviorSanitizer
// (FA_SANITIZE=ON, which defines FA_SANITIZED) instrument every load, store and arithmetic check and run
// the same code several times slower (a 200 KiB compile-cache hit: 4-6 ms plain, 24 ms under ASan on the
// loaded 2-core machine, 2026-12-01). A bound multiplied by this still catches what it is there for (a hit
// that recompiles takes 300 ms and more), without failing the sanitizer run on speed.
namespace fl::test {

#ifdef FA_SANITIZED
inline constexpr double kTimingSlack = 5.0;
#else
inline constexpr double kTimingSlack = 1.0;
#endif

}  // namespace fl::test
