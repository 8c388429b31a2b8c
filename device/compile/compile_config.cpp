#include "device/compile/compile_config.hpp"

#include "runtime/compile_worker.hpp"
#include "runtime/kernel_source.hpp"

namespace fl::device {

runtime::Result<runtime::CompileRequest> make_family_request(Family const& family, Config const& config,
                                                             Problem const& problem,
                                                             CompileSpec const& spec) {
  auto source = runtime::load_kernel_source(family.source_file(problem), spec.kernels_dir);
  if (!source) return source.error();
  auto request = runtime::make_compile_request(source.value(), spec.arch);
  request.name_expressions = family.name_expressions(config, problem);
  // (emplace, not operator[] = "1": g++ 12 -O3 reports a false -Wrestrict on that string assignment)
  for (auto const& name : spec.mutant_switches) request.defines.insert_or_assign(name, std::string(1, '1'));
  return request;
}

runtime::Result<runtime::CompiledProgram> compile_family_config(Family const& family, Config const& config,
                                                                Problem const& problem,
                                                                CompileSpec const& spec) {
  auto request = make_family_request(family, config, problem, spec);
  if (!request) return request.error();
  // In a worker process when there is one, so that a compiler crash is this config's error, not ours.
  if (auto worker = runtime::find_compile_worker())
    return runtime::compile_in_worker(request.value(), {*worker, runtime::CompileWorkerOptions{}.timeout})
        .result;
  return runtime::compile(request.value());
}

}  // namespace fl::device
