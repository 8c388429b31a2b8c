#pragma once
// A family's tunables for one problem as a ParameterSpace: device::space_axes (its parameters in declaration
// order, then its precision options, each held at the default's value: one-value axes, never searched),
// valid where the family's constraints (Family::violates, the mirror of the kernel's static_asserts) hold.
#include "device/family.hpp"
#include "tuner/strategy/parameter_space.hpp"

namespace fl::tuner {

ParameterSpace family_space(device::Family const& family, device::Problem const& problem);

}  // namespace fl::tuner
