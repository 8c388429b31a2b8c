#pragma once
// For [gpu] tests: the primary context of device 0 and the smoke kernels compiled for it.
#include <catch2/catch.hpp>

#include "runtime/device.hpp"
#include "runtime/module.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/runtime/smoke_program.hpp"

namespace fl::test {

struct SmokeOnGpu {
  runtime::PrimaryContext context;
  runtime::CompiledProgram program;
  runtime::LoadedModule module;
};

inline SmokeOnGpu load_smoke_on_gpu() {
  auto context = runtime::PrimaryContext::retain(0);
  if (!context.ok()) FAIL(context.error().one_line());
  auto arch = runtime::arch_for_device(context->info().cc_major, context->info().cc_minor);
  if (!arch.ok()) FAIL(arch.error().one_line());
  auto program = runtime::compile(smoke_request(arch.value()));
  if (!program.ok()) FAIL(program.error().one_line() + "\n" + program.error().log);
  auto module = runtime::LoadedModule::load(program->cubin);
  if (!module.ok()) FAIL(module.error().one_line() + "\n" + module.error().log);
  return SmokeOnGpu{std::move(context).value(), std::move(program).value(), std::move(module).value()};
}

}  // namespace fl::test
