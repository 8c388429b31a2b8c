#include "device/family.hpp"

#include <algorithm>

namespace fl::device {

std::vector<ParamSpec> space_axes(Family const& family, Problem const& problem) {
  auto axes = family.parameters();
  Config const fallback = family.default_config(problem);
  for (auto option : family.precision_options()) {
    if (option.values.empty()) continue;
    option.values = {value_or(fallback, option.name, option.values.front())};
    axes.push_back(std::move(option));
  }
  return axes;
}

std::vector<Config> enumerate_space(Family const& family, Problem const& problem) {
  auto const params = space_axes(family, problem);
  std::vector<Config> out;
  std::vector<std::size_t> index(params.size(), 0);
  for (auto const& p : params)
    if (p.values.empty()) return out;
  while (true) {
    Config config;
    for (std::size_t i = 0; i < params.size(); ++i) config[params[i].name] = params[i].values[index[i]];
    if (!family.violates(config, problem)) out.push_back(std::move(config));
    // Odometer increment, last parameter fastest.
    std::size_t axis = params.size();
    while (axis > 0) {
      --axis;
      if (++index[axis] < params[axis].values.size()) break;
      index[axis] = 0;
      if (axis == 0) return out;
    }
    if (params.empty()) return out;
  }
}

std::optional<std::string> unknown_config_key(Family const& family, Config const& config) {
  auto const list = [](std::vector<ParamSpec> const& specs) {
    std::string names;
    for (auto const& spec : specs) names += (names.empty() ? "" : ", ") + spec.name;
    return names;
  };
  auto const tunables = family.parameters();
  auto const options = family.precision_options();
  auto const names = [&](std::string const& key) {
    auto const named = [&](ParamSpec const& spec) { return spec.name == key; };
    return std::ranges::any_of(tunables, named) || std::ranges::any_of(options, named);
  };
  for (auto const& [key, value] : config) {
    if (names(key)) continue;
    std::string why =
        key + " is not a tunable of " + std::string(family.name()) + " (" + list(tunables) + ")";
    if (!options.empty()) why += " nor a precision option (" + list(options) + ")";
    return why;
  }
  return std::nullopt;
}

runtime::Result<std::vector<unsigned char>> Family::tma_argument(Config const& config, Problem const& problem,
                                                                 fa::AttentionParams const& params) const {
  auto const maps = tensor_maps(config, problem, params);
  if (maps.empty()) return std::vector<unsigned char>{};
  auto api = runtime::driver_api();
  if (!api) return api.error();
  return runtime::encode_tensor_maps(*api.value(), maps);
}

std::pair<int, int> Family::tile_rows_and_keys(Config const& config, Problem const&) const {
  return {value_or(config, "kBlockM", 0), value_or(config, "kBlockN", 0)};
}

std::string element_type_name(common::Precision dtype) {
  switch (dtype) {
    case common::Precision::fp16:
      return "__half";
    case common::Precision::bf16:
      return "__nv_bfloat16";
    case common::Precision::fp8_e4m3:
      return "__nv_fp8_e4m3";
    case common::Precision::fp8_e5m2:
      return "__nv_fp8_e5m2";
    case common::Precision::fp32:
      return "float";
  }
  return "float";
}

}  // namespace fl::device
