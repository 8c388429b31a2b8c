#include "runtime/target_arch.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace fl::runtime {
namespace {

struct ArchEntry {
  TargetArch arch;
  std::string_view name;
  int compute_capability;
};

constexpr std::array<ArchEntry, 4> kArchs = {{
    {TargetArch::sm_80, "sm_80", 80},
    {TargetArch::sm_89, "sm_89", 89},
    {TargetArch::sm_90, "sm_90", 90},
    {TargetArch::sm_90a, "sm_90a", 90},
}};

ArchEntry const& entry(TargetArch arch) {
  return *std::find_if(kArchs.begin(), kArchs.end(), [arch](ArchEntry const& e) { return e.arch == arch; });
}

std::string lowercase_without_prefix(std::string_view text) {
  std::string lowered;
  for (char c : text) lowered.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (std::string_view prefix : {"sm_", "sm"}) {
    if (lowered.starts_with(prefix)) return lowered.substr(prefix.size());
  }
  return lowered;
}

}  // namespace

std::string_view arch_name(TargetArch arch) { return entry(arch).name; }

int arch_compute_capability(TargetArch arch) { return entry(arch).compute_capability; }

std::string allowed_arch_names() {
  std::string names;
  for (auto const& e : kArchs) names += (names.empty() ? "" : ", ") + std::string(e.name);
  return names;
}

Result<TargetArch> parse_target_arch(std::string_view text) {
  std::string const wanted = lowercase_without_prefix(text);
  for (auto const& e : kArchs) {
    if (e.name.substr(3) == wanted) return e.arch;
  }
  return Error{"arch", "unknown target architecture '" + std::string(text) + "' (allowed: " + allowed_arch_names() + ")",
               ""};
}

Result<TargetArch> arch_for_device(int cc_major, int cc_minor) {
  constexpr int kAmpere = 8;
  constexpr int kHopper = 9;
  constexpr int kAdaMinor = 9;
  if (cc_major == kHopper && cc_minor == 0) return TargetArch::sm_90a;
  if (cc_major == kAmpere && cc_minor == kAdaMinor) return TargetArch::sm_89;
  if (cc_major == kAmpere) return TargetArch::sm_80;
  return Error{"arch",
               "no supported target for compute capability " + std::to_string(cc_major) + "." +
                   std::to_string(cc_minor) + " (supported: 8.x and 9.0)",
               ""};
}

}  // namespace fl::runtime
