#include "numerics/emulator/parallel_units.hpp"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

#include "numerics/emulator/emulator.hpp"

namespace fl::numerics::emulator {

int resolve_thread_count(int requested) {
  if (requested > 0) return requested;
  int const hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(hardware, 1, kMaxThreads);
}

void for_each_unit(std::size_t units, int threads, std::function<void(std::size_t)> const& work) {
  auto const count = static_cast<std::size_t>(std::max(1, threads));
  if (count == 1 || units < 2) {
    for (std::size_t u = 0; u < units; ++u) work(u);
    return;
  }
  std::vector<std::exception_ptr> errors(count);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < count; ++t) {
    pool.emplace_back([&, t] {
      try {
        for (std::size_t u = t; u < units; u += count) work(u);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  for (auto& thread : pool) thread.join();
  for (auto const& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace fl::numerics::emulator
