#pragma once
// The concrete families (one .cpp each); registry.cpp lists them for all_families().
#include "tuner/family/kernel_family.hpp"

namespace fl::tuner {

class SmokeFamily final : public KernelFamily {
 public:
  std::string name() const override;
  std::string description() const override;
  bool problem_independent() const override { return true; }
  bool supports(runtime::TargetArch arch, ProblemClass const& problem) const override;
  ParameterSpace space(ProblemClass const& problem) const override;
  Config default_config(ProblemClass const& problem) const override;
  CompileUnit compile_unit(Config const& config, ProblemClass const& problem) const override;
  std::size_t dynamic_shared_bytes(Config const& config, ProblemClass const& problem) const override;
  int block_threads(Config const& config, ProblemClass const& problem) const override;
};

}  // namespace fl::tuner
