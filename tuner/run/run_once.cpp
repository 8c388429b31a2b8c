#include "tuner/run/run_once.hpp"

#include "device/family_runner.hpp"
#include "tuner/run/device_problem.hpp"

namespace fl::tuner {

runtime::Result<HostOutputs> run_once(device::Family const& family, device::Config const& config,
                                      device::Problem const& problem, runtime::CompiledProgram const& program,
                                      HostInputs const& inputs, HostOutputs const* forward) {
  auto runner = device::FamilyRunner::load(family, config, problem, program);
  if (!runner) return runner.error();
  auto device = DeviceProblem::create(problem, inputs, family.scratch(config, problem), forward);
  if (!device) return device.error();
  if (auto st = runner->run(device->params); !st) return st.error();
  return device->download(problem);  // synchronous: also surfaces a launch failure
}

}  // namespace fl::tuner
