#include "tuner/family/families.hpp"

namespace fl::tuner {

std::vector<std::shared_ptr<KernelFamily const>> all_families() {
  return {std::make_shared<SmokeFamily>()};
}

std::shared_ptr<KernelFamily const> find_family(std::string const& name) {
  for (auto& family : all_families())
    if (family->name() == name) return family;
  return nullptr;
}

}  // namespace fl::tuner
