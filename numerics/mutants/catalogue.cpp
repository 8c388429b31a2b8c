#include "numerics/mutants/catalogue.hpp"

namespace fl::numerics::mutants {

std::optional<MutantId> find_mutant(std::string_view name) {
  for (auto const& m : kCatalogue)
    if (m.name == name || m.switch_name == name) return m.id;
  return std::nullopt;
}

std::string_view kind_name(MutantKind kind) {
  switch (kind) {
    case MutantKind::fwd:
      return "fwd";
    case MutantKind::bwd:
      return "bwd";
    case MutantKind::fp8:
      return "fp8";
    case MutantKind::gpu_only:
      return "gpu-only";
  }
  return "unknown";
}

}  // namespace fl::numerics::mutants
