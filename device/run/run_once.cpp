#include "device/run/run_once.hpp"

#include "device/family_runner.hpp"
#include "device/run/device_problem.hpp"

namespace fl::device {

runtime::Result<HostOutputs> run_once(Family const& family, Config const& config, Problem const& problem,
                                      runtime::CompiledProgram const& program, HostInputs const& inputs,
                                      HostOutputs const* forward, Fp8Operands const* fp8) {
  auto runner = FamilyRunner::load(family, config, problem, program);
  if (!runner) return runner.error();
  auto on_device = DeviceProblem::create(problem, inputs, family.scratch(config, problem), forward, fp8);
  if (!on_device) return on_device.error();
  if (auto st = runner->run(on_device->params); !st) return st.error();
  return on_device->download(problem);  // synchronous: also surfaces a launch failure
}

}  // namespace fl::device
