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

std::string precision_options_text() {
  std::string out;
  for (auto const& f : all_families())
    for (auto const& option : f->precision_options()) {
      std::string values;
      for (std::size_t i = 0; i < option.values.size(); ++i)
        values += (i == 0                          ? ""
                   : i + 1 == option.values.size() ? " or "
                                                   : ", ") +
                  std::to_string(option.values[i]) + (i == 0 ? " (the default)" : "");
      out += (out.empty() ? "" : "; ") + std::string(f->name()) + "'s " + option.name + ": " + values + ", " +
             option.meaning;
    }
  return out;
}

}  // namespace fl::device
