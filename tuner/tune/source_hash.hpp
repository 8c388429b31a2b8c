#pragma once
// The hash measurements are keyed by: SHA-256 over every kernels_src file the family's program for this
// problem includes. Editing one file re-tunes exactly the families and problems that include it.
#include <filesystem>
#include <string>

#include "device/family.hpp"
#include "runtime/result.hpp"

namespace fl::tuner {

runtime::Result<std::string> family_source_hash(device::Family const& family, device::Problem const& problem,
                                                std::filesystem::path const& kernels_dir);

}  // namespace fl::tuner
