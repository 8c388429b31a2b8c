#include "tuner/strategy/family_space.hpp"

namespace fl::tuner {

ParameterSpace family_space(device::Family const& family, device::Problem const& problem) {
  std::vector<Parameter> parameters;
  for (auto const& spec : device::space_axes(family, problem)) parameters.push_back({spec.name, spec.values});
  // The family outlives the space in every caller (the registry hands out owning pointers held for the
  // whole run); the problem is copied.
  return ParameterSpace(std::move(parameters), [&family, problem](device::Config const& config) {
    return !family.violates(config, problem);
  });
}

}  // namespace fl::tuner
