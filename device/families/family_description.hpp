#pragma once
// A kernel family, declared: its name and the functions that say everything else about it (kernels_src
// file, tunables, rules, the default, the kernels to instantiate, the launches, scratch, tensor maps). A
// family is one .cpp under device/families/ that defines its FamilyDescription (declared in families.hpp);
// DescribedFamily makes any description a device::Family, so adding a family writes no class.
#include <string_view>

#include "device/family.hpp"

namespace fl::device {

struct FamilyDescription {
  std::string_view name;  // "fa2_sm80"
  std::string (*source_file)(Problem const&);
  std::vector<ParamSpec> (*parameters)();
  std::optional<std::string> (*unsupported)(Problem const&);
  std::optional<std::string> (*violates)(Config const&, Problem const&);
  Config (*default_config)(Problem const&);
  std::vector<std::string> (*name_expressions)(Config const&, Problem const&);
  std::vector<LaunchStep> (*launches)(Config const&, Problem const&);
  // Optional: nullptr takes Family's default (no precision options; the default config; no scratch;
  // kBlockM x kBlockN; no maps).
  std::vector<ParamSpec> (*precision_options)() = nullptr;
  Config (*reproducible_config)(Problem const&) = nullptr;
  ScratchBytes (*scratch)(Config const&, Problem const&) = nullptr;
  common::Precision (*score_precision)(Config const&, Problem const&) = nullptr;
  std::pair<int, int> (*tile_rows_and_keys)(Config const&, Problem const&) = nullptr;
  std::vector<runtime::TensorMapSpec> (*tensor_maps)(Config const&, Problem const&,
                                                     fa::AttentionParams const&) = nullptr;
};

// The six required functions of a family whose .cpp defines them under their field names in namespace
// `ns` (every family's does): fa1::kDescription{.name = "fa1", .source_file = ..., FL_FAMILY_FUNCTIONS(fa1),
// ...}.
#define FL_FAMILY_FUNCTIONS(ns)                                                           \
  .parameters = ns::parameters, .unsupported = ns::unsupported, .violates = ns::violates, \
  .default_config = ns::default_config, .name_expressions = ns::name_expressions, .launches = ns::launches

// The Family a description declares (the description outlives it: descriptions are namespace-scope
// constants).
class DescribedFamily : public Family {
 public:
  explicit DescribedFamily(FamilyDescription const& description) : d_(description) {}

  std::string_view name() const override { return d_.name; }
  std::string source_file(Problem const& problem) const override { return d_.source_file(problem); }
  std::vector<ParamSpec> parameters() const override { return d_.parameters(); }
  std::vector<ParamSpec> precision_options() const override {
    return d_.precision_options ? d_.precision_options() : Family::precision_options();
  }
  std::optional<std::string> unsupported(Problem const& problem) const override {
    return d_.unsupported(problem);
  }
  std::optional<std::string> violates(Config const& config, Problem const& problem) const override {
    return d_.violates(config, problem);
  }
  Config default_config(Problem const& problem) const override { return d_.default_config(problem); }
  Config reproducible_config(Problem const& problem) const override;
  std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const override {
    return d_.name_expressions(config, problem);
  }
  std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const override {
    return d_.launches(config, problem);
  }
  ScratchBytes scratch(Config const& config, Problem const& problem) const override;
  common::Precision score_precision(Config const& config, Problem const& problem) const override;
  std::pair<int, int> tile_rows_and_keys(Config const& config, Problem const& problem) const override;
  std::vector<runtime::TensorMapSpec> tensor_maps(Config const& config, Problem const& problem,
                                                  fa::AttentionParams const& params) const override;

 private:
  FamilyDescription const& d_;
};

// A default-constructible DescribedFamily of one description, for code that makes a family on the stack
// (tests, fa-bench): families.hpp names one per family (Fa2Sm80Family =
// DeclaredFamily<fa2_sm80::kDescription>).
template <FamilyDescription const& kDescription>
class DeclaredFamily final : public DescribedFamily {
 public:
  DeclaredFamily() : DescribedFamily(kDescription) {}
};

}  // namespace fl::device
