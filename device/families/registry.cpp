#include "device/families/registry.hpp"

#include "device/families/families.hpp"

namespace fl::device {

std::vector<std::unique_ptr<Family>> all_families() {
  std::vector<std::unique_ptr<Family>> out;
  for (FamilyDescription const* description : kFamilies)
    out.push_back(std::make_unique<DescribedFamily>(*description));
  return out;
}

std::unique_ptr<Family> find_family(std::string_view name) {
  for (auto& f : all_families())
    if (f->name() == name) return std::move(f);
  return nullptr;
}

std::string family_names() {
  std::string out;
  for (auto const& f : all_families()) out += (out.empty() ? "" : ", ") + std::string(f->name());
  return out;
}

}  // namespace fl::device
