#pragma once
// A kernel family as the tuner sees it: its search space (parameters, values, constraints, declared
// once, here), how a config becomes an NVRTC program (kernels_src file, -D defines, name expressions),
// and which problems it can run. One file per family; registry.cpp lists them.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/target_arch.hpp"
#include "tuner/problem.hpp"
#include "tuner/strategy/parameter_space.hpp"

namespace fl::tuner {

// What NVRTC compiles for one config: the family's main kernels_src file, the defines that carry the
// tunables, and the kernels to lower (template instantiations through name expressions).
struct CompileUnit {
  std::string kernels_file;
  std::map<std::string, std::string> defines;
  std::vector<std::string> name_expressions;
};

class KernelFamily {
 public:
  virtual ~KernelFamily() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // True when neither the space nor the compiled code depends on the problem class (the smoke family):
  // its configs are compiled and listed once rather than once per problem class.
  virtual bool problem_independent() const { return false; }
  // Whether this family has kernels for (arch, problem class); e.g. fp8 needs sm_89+.
  virtual bool supports(runtime::TargetArch arch, ProblemClass const& problem) const = 0;
  // The search space for one problem class, its constraints included (pruned before compiling).
  virtual ParameterSpace space(ProblemClass const& problem) const = 0;
  // The family's hand-picked default config (what the tuned best is compared against).
  virtual Config default_config(ProblemClass const& problem) const = 0;
  virtual CompileUnit compile_unit(Config const& config, ProblemClass const& problem) const = 0;
  // Dynamic shared memory the config's kernels need, for pruning against the device's opt-in limit.
  virtual std::size_t dynamic_shared_bytes(Config const& config, ProblemClass const& problem) const = 0;
  // Threads per block of the config's main kernel, for the register-occupancy check.
  virtual int block_threads(Config const& config, ProblemClass const& problem) const = 0;
};

// Every family that exists, in a stable order.
std::vector<std::shared_ptr<KernelFamily const>> all_families();
std::shared_ptr<KernelFamily const> find_family(std::string const& name);

}  // namespace fl::tuner
