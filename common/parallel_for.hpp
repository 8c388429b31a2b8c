#pragma once
// Split [0, count) into contiguous chunks over std::thread workers. The reference is embarrassingly
// parallel over query rows and key rows; a shared atomic cursor hands out chunks so that rows of very
// different cost (causal: row i sees i + 1 keys) balance across the cores.
#include <cstddef>
#include <functional>

namespace fl::common {

// Worker count: `requested` if positive, else std::thread::hardware_concurrency() (at least 1).
int resolve_thread_count(int requested);

// Every core but one (at least 1): for work that runs beside a thread that must not wait for a core
// (fa-tune's judge and its forward computed ahead, beside the thread that launches the timed runs).
int all_cores_but_one();

// Threads for one pass over `count` elements of cheap work (a conversion, a screen): 1 below 2^16 elements,
// where starting the threads costs more than the pass (~50 us), else `requested` (0: every core).
int elementwise_threads(std::size_t count, int requested = 0);

// Calls body(begin, end) for disjoint chunks covering [0, count). Exceptions thrown by a body are
// rethrown on the calling thread after every worker has stopped.
void parallel_for(std::size_t count, int threads, std::function<void(std::size_t, std::size_t)> const& body);

}  // namespace fl::common
