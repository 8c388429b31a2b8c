#pragma once
// The concrete strategies (one .cpp each). Callers use make_strategy(); tests use the types directly.
#include <random>
#include <set>

#include "tuner/strategy/gaussian_process.hpp"
#include "tuner/strategy/strategy.hpp"

namespace fl::tuner {

class ExhaustiveStrategy final : public SearchStrategy {
 public:
  explicit ExhaustiveStrategy(ParameterSpace const& space);
  std::string_view name() const override { return "exhaustive"; }
  std::optional<PointIndex> next() override;
  void report(PointIndex const& point, std::optional<double> cost) override;
  std::vector<PointIndex> upcoming(std::size_t n) const override;

 private:
  std::vector<PointIndex> points_;
  std::size_t cursor_ = 0;
};

class RandomStrategy final : public SearchStrategy {
 public:
  RandomStrategy(ParameterSpace const& space, std::uint64_t seed);
  std::string_view name() const override { return "random"; }
  std::optional<PointIndex> next() override;
  void report(PointIndex const& point, std::optional<double> cost) override;
  std::vector<PointIndex> upcoming(std::size_t n) const override;

 private:
  std::vector<PointIndex> points_;
  std::size_t cursor_ = 0;
};

class AnnealingStrategy final : public SearchStrategy {
 public:
  AnnealingStrategy(ParameterSpace const& space, std::uint64_t seed);
  std::string_view name() const override { return "anneal"; }
  std::optional<PointIndex> next() override;
  void report(PointIndex const& point, std::optional<double> cost) override;
  std::vector<PointIndex> upcoming(std::size_t n) const override;

 private:
  // A uniformly random unvisited point other than `excluding`.
  std::optional<PointIndex> random_unvisited(std::optional<PointIndex> const& excluding);
  std::vector<PointIndex> unvisited_neighbours(PointIndex const& point) const;

  ParameterSpace const& space_;
  std::mt19937_64 rng_;
  std::set<PointIndex> unvisited_;
  std::optional<PointIndex> current_;
  double current_cost_ = 0.0;
  double temperature_;
  std::optional<PointIndex> proposed_;  // returned by next(), not yet reported
  std::optional<PointIndex>
      restart_;  // where the walk goes when the current point has no unvisited neighbour
};

class BayesStrategy final : public SearchStrategy {
 public:
  BayesStrategy(ParameterSpace const& space, std::uint64_t seed);
  std::string_view name() const override { return "bayes"; }
  std::optional<PointIndex> next() override;
  void report(PointIndex const& point, std::optional<double> cost) override;
  std::vector<PointIndex> upcoming(std::size_t n) const override;

 private:
  std::vector<double> features(PointIndex const& point) const;
  // Indices into candidates_, by expected improvement under the model of the observations so far.
  std::vector<std::size_t> ranked_by_expected_improvement() const;

  ParameterSpace const& space_;
  std::vector<PointIndex> candidates_;
  std::mt19937_64 rng_;
  std::vector<std::vector<double>> observed_x_;
  std::vector<double> observed_y_;      // log time, or the penalty for rejected points
  std::vector<double> observed_costs_;  // log time of accepted points only
};

}  // namespace fl::tuner
