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
// Every family's precision options (Family::precision_options) for --help: "naive's kScoreBits: 32 (the
// default) or 16, S in device memory: ...", joined by "; ".
std::string precision_options_text();

}  // namespace fl::device
