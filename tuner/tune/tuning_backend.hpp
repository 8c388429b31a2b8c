#pragma once
// What fa-tune's run needs from the machine it measures on: the GPU's key, the NVRTC version, and one
// evaluator per family. The GPU backend (gpu_backend.hpp) compiles on a pool, verifies and times on the
// device; the replay backend (replay_backend.hpp) answers from a recorded measurement TSV, so the whole
// command (budget split, families, report, plots) runs and is tested without a GPU exactly as with one.
#include <memory>
#include <string>

#include "db/tuning_store.hpp"
#include "device/family.hpp"
#include "tuner/tune/evaluator.hpp"

namespace fl::tuner {

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
};

}  // namespace fl::tuner
