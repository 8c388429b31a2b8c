#include "device/families/family_description.hpp"

namespace fl::device {

Config DescribedFamily::reproducible_config(Problem const& problem) const {
  return d_.reproducible_config ? d_.reproducible_config(problem) : Family::reproducible_config(problem);
}

ScratchBytes DescribedFamily::scratch(Config const& config, Problem const& problem) const {
  return d_.scratch ? d_.scratch(config, problem) : Family::scratch(config, problem);
}

common::Precision DescribedFamily::score_precision(Config const& config, Problem const& problem) const {
  return d_.score_precision ? d_.score_precision(config, problem) : Family::score_precision(config, problem);
}

std::pair<int, int> DescribedFamily::tile_rows_and_keys(Config const& config, Problem const& problem) const {
  return d_.tile_rows_and_keys ? d_.tile_rows_and_keys(config, problem)
                               : Family::tile_rows_and_keys(config, problem);
}

std::vector<runtime::TensorMapSpec> DescribedFamily::tensor_maps(Config const& config, Problem const& problem,
                                                                 fa::AttentionParams const& params) const {
  return d_.tensor_maps ? d_.tensor_maps(config, problem, params)
                        : Family::tensor_maps(config, problem, params);
}

}  // namespace fl::device
