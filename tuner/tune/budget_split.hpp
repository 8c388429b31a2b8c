#pragma once
// How --budget is split over the problems of a run: each problem's share counts the evaluations it already
// has (its default, the rows resumed from the database), so a problem with many stored rows does not take
// the same new evaluations as one with none. Shares are levelled like water: every problem left may reach
// the same total, a problem whose space ends below that level passes the rest to the others.
#include <span>

namespace fl::tuner {

// One problem still to search: what it has evaluated, and how many it could (its space's valid configs).
struct BudgetClaim {
  int spent = 0;
  int capacity = 0;
};

// The total evaluations the first of `left_problems` may reach, `left` being the budget not yet spent by
// any problem of the run: the level L up to which every problem left can be filled from `left`, plus one
// while the rounding leaves some over (so that the whole budget is spent), never below what the problem has
// spent nor above its capacity. Called again for each problem in turn, after the ones before it spent
// theirs, it hands on whatever they left.
int budget_share(std::span<BudgetClaim const> left_problems, int left);

}  // namespace fl::tuner
