#pragma once
// Every kernel family FlashLab runs, by name.
#include <memory>
#include <string_view>
#include <vector>

#include "device/family.hpp"

namespace fl::device {

// All families, in a fixed order (naive, fa1, fa2_sm80 as they exist).
std::vector<std::unique_ptr<Family>> all_families();
// The family called `name`, or nullptr.
std::unique_ptr<Family> find_family(std::string_view name);
// "fa2_sm80, ..." for --help and error messages.
std::string family_names();

}  // namespace fl::device
