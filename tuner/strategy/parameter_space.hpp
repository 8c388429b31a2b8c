#pragma once
// The discrete space a search strategy walks: named parameters, each with an ordered list of values,
// and a validity predicate (the family's constraints). A point is one value index per parameter, so
// "neighbour" has a meaning (the next larger or smaller block size), which annealing and the Bayesian
// strategy's distance both rely on.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "device/config.hpp"

namespace fl::tuner {

struct Parameter {
  std::string name;
  std::vector<int> values;  // ordered: neighbours in the list are neighbours in the search
};

using PointIndex = std::vector<int>;  // one value index per parameter

class ParameterSpace {
 public:
  using Validity = std::function<bool(device::Config const&)>;

  ParameterSpace(std::vector<Parameter> parameters, Validity is_valid);

  std::vector<Parameter> const& parameters() const { return parameters_; }
  device::Config config_of(PointIndex const& point) const;
  // The point of `config` (every parameter set to one of its values, nothing else), when it is valid.
  std::optional<PointIndex> point_of(device::Config const& config) const;
  bool is_valid(PointIndex const& point) const;
  // Every valid point, in lexicographic index order (the exhaustive strategy's order).
  std::vector<PointIndex> valid_points() const;
  std::size_t total_points() const;  // the full product, valid or not

 private:
  std::vector<Parameter> parameters_;
  Validity is_valid_;
};

}  // namespace fl::tuner
