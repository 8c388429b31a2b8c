#pragma once
// A compiled family config loaded on the GPU: its module, one kernel per launch step, and run(), which
// enqueues every step of one problem on the default stream. For a TMA family, run() also passes the
// launch's tensor maps, encoded once per distinct set of tensor pointers (the benchmark rotates a few
// input sets: encoding stays off the timed path after the first run of each).
#include <functional>
#include <vector>

#include "kernels_src/fa_params.h"

#include "device/family.hpp"
#include "runtime/module.hpp"
#include "runtime/nvrtc_compiler.hpp"

namespace fl::device {

class FamilyRunner {
 public:
  // Loads `program` and looks up the kernels the problem's launch steps name. Needs a current context.
  static runtime::Result<FamilyRunner> load(Family const& family, Config const& config,
                                            Problem const& problem, runtime::CompiledProgram const& program);

  // Enqueues every launch step with `params` (params.step set per step). Asynchronous.
  runtime::Status run(fa::AttentionParams params);

  std::vector<LaunchStep> const& steps() const { return steps_; }

 private:
  using TmaEncoder = std::function<runtime::Result<std::vector<unsigned char>>(fa::AttentionParams const&)>;
  struct EncodedMaps {
    void const *q, *k, *v, *o, *d_o;
    std::vector<unsigned char> bytes;
  };
  FamilyRunner(runtime::LoadedModule module, std::vector<runtime::Kernel> kernels,
               std::vector<LaunchStep> steps, TmaEncoder encoder)
      : module_(std::move(module)),
        kernels_(std::move(kernels)),
        steps_(std::move(steps)),
        encoder_(std::move(encoder)) {}
  // The tensor maps for params (empty for a family without them), from the cache when already encoded.
  runtime::Result<std::vector<unsigned char> const*> tma_argument(fa::AttentionParams const& params);

  runtime::LoadedModule module_;
  std::vector<runtime::Kernel> kernels_;  // one per step
  std::vector<LaunchStep> steps_;
  TmaEncoder encoder_;
  std::vector<EncodedMaps> encoded_;
};

}  // namespace fl::device
