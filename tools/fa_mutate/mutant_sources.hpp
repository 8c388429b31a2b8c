#pragma once
// A kernel family's sources as fa-mutate's GPU target reads them: its kernels_src main file and every
// header it includes, concatenated, which is where the FA_MUTANT_<ID> switches are looked for (a mutant
// applies to a family whose sources carry its switch).
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "device/family.hpp"
#include "runtime/result.hpp"

namespace fl::tools::fa_mutate {

struct FamilySource {
  std::unique_ptr<device::Family> family;
  std::string text;
  std::string files;  // "fa2_sm80_fwd.cu and the 7 kernels_src headers it includes", for reasons
};

// The problem a family is asked about before any input exists (its source file, whether it runs a dtype):
// bf16 at the default shape, in `direction`.
device::Problem representative_problem(device::Direction direction = device::Direction::forward);

// `family`'s sources for `direction`, from kernels_dir.
runtime::Result<FamilySource> load_family_source(std::unique_ptr<device::Family> family,
                                                 device::Direction direction,
                                                 std::filesystem::path const& kernels_dir);

// Whether `text` holds `switch_name` as a whole token on a preprocessor line (#ifdef, #ifndef, #if
// defined(...)): a mention in a comment or a longer name does not count.
bool source_has_switch(std::string_view text, std::string_view switch_name);

}  // namespace fl::tools::fa_mutate
