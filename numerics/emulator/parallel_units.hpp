#pragma once
// Runs independent work units on a few threads with a fixed assignment (unit u on thread u % threads).
// Each output element belongs to one unit, so results do not depend on the thread count or timing.
#include <cstddef>
#include <functional>

namespace fl::numerics::emulator {

int resolve_thread_count(int requested);
void for_each_unit(std::size_t units, int threads, std::function<void(std::size_t)> const& work);

}  // namespace fl::numerics::emulator
