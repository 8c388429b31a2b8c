// The levelled split of --budget (tune/budget_split.hpp): counted in totals, stored rows included, so a
// problem with many rows leaves the new evaluations to the ones with few, and nothing is lost to rounding
// or to a space too small to take its share.
#include <catch2/catch.hpp>

#include <vector>

#include "tuner/tune/budget_split.hpp"

using fl::tuner::budget_share;
using fl::tuner::BudgetClaim;

namespace {

// Each problem in turn takes its share and spends all of it, as a search that is never cut does.
std::vector<int> spend_in_turn(std::vector<BudgetClaim> claims, int budget) {
  int spent = 0;
  for (auto const& c : claims) spent += c.spent;
  std::vector<int> totals;
  for (std::size_t k = 0; k < claims.size(); ++k) {
    int const share = budget_share(std::span(claims).subspan(k), budget - spent);
    spent += share - claims[k].spent;
    claims[k].spent = share;
    totals.push_back(share);
  }
  return totals;
}

}  // namespace

TEST_CASE("with nothing stored the budget splits evenly, the rounding's remainder to the first",
          "[tuner][tune]") {
  CHECK(spend_in_turn({{0, 100}, {0, 100}, {0, 100}, {0, 100}}, 10) == std::vector<int>{3, 3, 2, 2});
  CHECK(spend_in_turn({{1, 100}, {1, 100}, {1, 100}, {1, 100}}, 10) == std::vector<int>{3, 3, 2, 2});
}

TEST_CASE("stored rows count toward a problem's share: the new evaluations go to the thin problems",
          "[tuner][tune]") {
  // 60 in all, 40 stored: the level is 15, so the problem with 30 rows measures nothing more.
  CHECK(spend_in_turn({{30, 100}, {5, 100}, {5, 100}}, 60) == std::vector<int>{30, 15, 15});
  // The rich problem comes last: the same shares.
  CHECK(spend_in_turn({{5, 100}, {5, 100}, {30, 100}}, 60) == std::vector<int>{15, 15, 30});
}

TEST_CASE("what a small space cannot take passes to the others", "[tuner][tune]") {
  CHECK(spend_in_turn({{0, 4}, {0, 100}, {0, 100}}, 30) == std::vector<int>{4, 13, 13});
  // Every space full below the budget: each takes its whole space and the rest stays unspent.
  CHECK(spend_in_turn({{2, 4}, {0, 6}}, 30) == std::vector<int>{4, 6});
}

TEST_CASE("nothing left: a problem keeps what it has and measures nothing more", "[tuner][tune]") {
  std::vector<BudgetClaim> const claims{{7, 20}, {0, 20}};
  CHECK(budget_share(claims, 0) == 7);
  CHECK(budget_share(claims, -3) == 7);
  CHECK(budget_share({}, 5) == 0);
}

TEST_CASE("the shares never exceed the budget left, whatever the claims", "[tuner][tune]") {
  for (int budget : {1, 7, 50, 333})
    for (int rich : {0, 3, 40}) {
      std::vector<BudgetClaim> const claims{{rich, 60}, {1, 5}, {0, 60}, {2, 60}, {rich / 2, 60}};
      int stored = 0;
      for (auto const& c : claims) stored += c.spent;
      auto const totals = spend_in_turn(claims, budget);
      int total = 0;
      for (std::size_t k = 0; k < totals.size(); ++k) {
        CHECK(totals[k] >= claims[k].spent);
        CHECK(totals[k] <= claims[k].capacity);
        total += totals[k];
      }
      INFO("budget " << budget << ", rich " << rich);
      CHECK(total - stored <= std::max(0, budget - stored));
      if (budget >= stored) CHECK(total == std::min(budget, 60 + 5 + 60 + 60 + 60));
    }
}
