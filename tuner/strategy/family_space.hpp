#pragma once
// A family's tunables for one problem as a ParameterSpace: its parameters in declaration order, valid
// where the family's constraints (Family::violates, the mirror of the kernel's static_asserts) hold.
#include "tuner/family.hpp"
#include "tuner/strategy/parameter_space.hpp"

namespace fl::tuner {

ParameterSpace family_space(Family const& family, Problem const& problem);

}  // namespace fl::tuner
