#include "tuner/compile/space_compile.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

namespace fl::tuner {

std::vector<SpaceEntry> compile_space(device::Family const& family, device::Problem const& problem,
                                      device::CompileSpec const& spec, unsigned threads) {
  auto const configs = device::enumerate_space(family, problem);
  std::vector<SpaceEntry> out(configs.size());
  std::atomic<std::size_t> next{0};
  auto const worker = [&] {
    for (std::size_t i = next++; i < configs.size(); i = next++) {
      SpaceEntry& e = out[i];
      e.config = configs[i];
      auto const program = device::compile_family_config(family, e.config, problem, spec);
      if (!program) {
        e.error = program.error().message;
        continue;
      }
      e.compiled = true;
      e.compile_ms = program->compile_ms;
      for (auto const& name : family.name_expressions(e.config, problem)) {
        if (auto const* r = program->resources_of(name)) {
          e.max_registers = std::max(e.max_registers, r->registers);
          e.spill_bytes += r->spill_store_bytes + r->spill_load_bytes;
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, threads); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return out;
}

}  // namespace fl::tuner
