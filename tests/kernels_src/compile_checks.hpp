#pragma once
// Shared by the kernels_src compile tests: compile one NVRTC program (its log shown on failure) and check
// that every name expression it instantiates compiled without spills.
#include <catch2/catch.hpp>

#include <string>

#include "runtime/nvrtc_compiler.hpp"

namespace fl::test {

inline runtime::CompiledProgram compile_or_fail(runtime::CompileRequest const& request) {
  auto program = runtime::compile(request);
  INFO((program.ok() ? std::string() : program.error().log));
  REQUIRE(program);
  return std::move(program.value());
}

// Every name of `request` compiled without spills; returns the program for further checks.
inline runtime::CompiledProgram compiles_spill_free(runtime::CompileRequest const& request) {
  auto program = compile_or_fail(request);
  for (auto const& name : request.name_expressions) {
    auto const* r = program.resources_of(name);
    REQUIRE(r);
    INFO(name << ": " << r->registers << " registers, " << r->spill_store_bytes << " spill bytes");
    CHECK_FALSE(r->spills());
  }
  return program;
}

}  // namespace fl::test
