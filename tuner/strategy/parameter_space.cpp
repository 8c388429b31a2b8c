#include "tuner/strategy/parameter_space.hpp"

#include <algorithm>
#include <stdexcept>

namespace fl::tuner {

ParameterSpace::ParameterSpace(std::vector<Parameter> parameters, Validity is_valid)
    : parameters_(std::move(parameters)), is_valid_(std::move(is_valid)) {
  for (auto const& p : parameters_)
    if (p.values.empty()) throw std::invalid_argument("parameter " + p.name + " has no values");
}

device::Config ParameterSpace::config_of(PointIndex const& point) const {
  device::Config config;
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    config[parameters_[i].name] = parameters_[i].values.at(point.at(i));
  return config;
}

std::optional<PointIndex> ParameterSpace::point_of(device::Config const& config) const {
  if (config.size() != parameters_.size()) return std::nullopt;
  PointIndex point;
  for (auto const& p : parameters_) {
    auto const it = config.find(p.name);
    if (it == config.end()) return std::nullopt;
    auto const at = std::find(p.values.begin(), p.values.end(), it->second);
    if (at == p.values.end()) return std::nullopt;
    point.push_back(int(at - p.values.begin()));
  }
  if (!is_valid(point)) return std::nullopt;
  return point;
}

bool ParameterSpace::is_valid(PointIndex const& point) const {
  if (point.size() != parameters_.size()) return false;
  for (std::size_t i = 0; i < point.size(); ++i)
    if (point[i] < 0 || point[i] >= static_cast<int>(parameters_[i].values.size())) return false;
  return !is_valid_ || is_valid_(config_of(point));
}

std::size_t ParameterSpace::total_points() const {
  std::size_t total = 1;
  for (auto const& p : parameters_) total *= p.values.size();
  return total;
}

std::vector<PointIndex> ParameterSpace::valid_points() const {
  std::vector<PointIndex> points;
  PointIndex point(parameters_.size(), 0);
  for (std::size_t n = 0; n < total_points(); ++n) {
    if (is_valid(point)) points.push_back(point);
    // Odometer increment, last parameter fastest.
    for (std::size_t i = parameters_.size(); i-- > 0;) {
      if (++point[i] < static_cast<int>(parameters_[i].values.size())) break;
      point[i] = 0;
    }
  }
  return points;
}

}  // namespace fl::tuner
