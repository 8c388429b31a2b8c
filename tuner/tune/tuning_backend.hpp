#pragma once
// What fa-tune's run needs from the machine it measures on: the GPU's key, the NVRTC version, and one
// evaluator per family. The GPU backend (gpu_backend.hpp) compiles on a pool, verifies and times on the
// device; the replay backend (replay_backend.hpp) answers from a recorded measurement TSV, so the whole
// command (budget split, families, report, plots) runs and is tested without a GPU exactly as with one.
#include <cstddef>
#include <memory>
#include <string>

#include "db/tuning_store.hpp"
#include "device/family.hpp"
#include "tuner/tune/evaluator.hpp"

namespace fl::tuner {

struct ForwardSources {
  std::size_t ahead = 0;   // computed ahead while the problem before searched (ReferenceCache::forward_ahead)
  std::size_t kept = 0;    // kept in memory from an earlier set of this run
  std::size_t stored = 0;  // read from --forward-store, and checked
  // Forward problems' verification sets built ahead while the problem before ran (normal_set_ahead).
  std::size_t sets_ahead = 0;
};

class TuningBackend {
 public:
  virtual ~TuningBackend() = default;
  virtual db::GpuKey gpu() const = 0;
  virtual std::string nvrtc_version() const = 0;
  virtual int compile_workers() const = 0;
  // The evaluator of `family`, alive as long as the backend (one per family, reused across problems).
  virtual Evaluator& evaluator_for(device::Family const& family) = 0;
  // Whether this backend can answer `problem` for `family` at all (a replay: the recording has it); a pair
  // it cannot is left out of the run, not reported as failing.
  virtual bool can_measure(device::Family const& /*family*/, device::Problem const& /*problem*/) const {
    return true;
  }
  // Seconds spent on verification inputs and their float64 references (once per problem, shared).
  virtual double reference_seconds() const { return 0.0; }
  // Where the backward problems' float64 forwards came from, other than computed when needed.
  virtual ForwardSources forward_sources() const { return {}; }
};

}  // namespace fl::tuner
