#include "tuner/tune/budget_split.hpp"

#include <algorithm>
#include <cstdint>

namespace fl::tuner {

namespace {

// New evaluations needed to bring every problem up to `level` (each at most to its capacity).
std::int64_t needed_for(std::span<BudgetClaim const> problems, int level) {
  std::int64_t sum = 0;
  for (auto const& p : problems) sum += std::max(0, std::min(level, p.capacity) - p.spent);
  return sum;
}

}  // namespace

int budget_share(std::span<BudgetClaim const> left_problems, int left) {
  if (left_problems.empty()) return 0;
  auto const& first = left_problems.front();
  int const spent = first.spent;
  int const capacity = std::max(first.capacity, spent);
  if (left <= 0) return spent;
  // The highest level the budget left fills for every problem: needed_for grows with the level, so
  // bisect between 0 (needs nothing) and the largest capacity (past it nothing more can be taken).
  int top = 0;
  for (auto const& p : left_problems) top = std::max(top, p.capacity);
  if (needed_for(left_problems, top) <= left) return capacity;
  int low = 0, high = top;  // needed_for(low) <= left < needed_for(high)
  while (high - low > 1) {
    int const mid = low + (high - low) / 2;
    (needed_for(left_problems, mid) <= left ? low : high) = mid;
  }
  // What the level leaves over goes one each to the problems that can still grow at it, the first first.
  bool const grows = spent <= low && low < capacity;
  int const share = low + (grows && needed_for(left_problems, low) < left ? 1 : 0);
  return std::clamp(share, spent, capacity);
}

}  // namespace fl::tuner
