#include "common/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace fl::common {

namespace {
// Chunks per worker: enough to balance triangular (causal) work, few enough that the cursor is cold.
constexpr std::size_t kChunksPerWorker = 16;
// elementwise_threads' threshold: 2^16 conversions take ~50 us on one core, about what starting a pool of
// threads costs.
constexpr std::size_t kMinParallelElements = std::size_t{1} << 16;
}  // namespace

int resolve_thread_count(int requested) {
  if (requested > 0) return requested;
  unsigned const hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : int(hw);
}

int all_cores_but_one() {
  return std::max(1, resolve_thread_count(0) - 1);
}

int elementwise_threads(std::size_t count, int requested) {
  return count < kMinParallelElements ? 1 : requested;
}

void parallel_for(std::size_t count, int threads, std::function<void(std::size_t, std::size_t)> const& body) {
  if (count == 0) return;
  std::size_t const workers = std::min<std::size_t>(std::size_t(resolve_thread_count(threads)), count);
  if (workers <= 1) {
    body(0, count);
    return;
  }
  std::size_t const chunk = std::max<std::size_t>(1, count / (workers * kChunksPerWorker));
  std::atomic<std::size_t> cursor{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    try {
      for (;;) {
        std::size_t const begin = cursor.fetch_add(chunk);
        if (begin >= count) return;
        body(begin, std::min(count, begin + chunk));
      }
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      cursor.store(count);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace fl::common
