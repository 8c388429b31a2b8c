#pragma once
// The hash measurements are keyed by: SHA-256 over every kernels_src file the family's program for this
// problem includes. Editing one file re-tunes exactly the families and problems that include it.
#include <filesystem>
#include <string>

#include "runtime/result.hpp"
#include "tuner/family.hpp"

namespace fl::tuner {

runtime::Result<std::string> family_source_hash(Family const& family, Problem const& problem,
                                                std::filesystem::path const& kernels_dir);

}  // namespace fl::tuner
