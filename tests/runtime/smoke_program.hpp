#pragma once
// The repository's kernels_src/smoke.cu as a compile request, shared by the compiler and module tests.
#include <string>

#include "runtime/compile_request.hpp"
#include "runtime/kernel_source.hpp"

namespace fl::test {

inline constexpr char const* kSmokeAxpy = "fl::smoke::vector_axpy<4>";
inline constexpr char const* kSmokeReverse = "fl::smoke::chunk_reverse";
inline constexpr int kSmokeBlockSize = 256;
inline constexpr int kSmokeItemsPerThread = 4;

inline runtime::CompileRequest smoke_request(runtime::TargetArch arch) {
  auto source = runtime::load_kernel_source("smoke.cu", std::string(FA_SOURCE_DIR) + "/kernels_src");
  auto request = runtime::make_compile_request(source.value(), arch);
  request.defines["FA_BLOCK_SIZE"] = std::to_string(kSmokeBlockSize);
  request.name_expressions = {kSmokeAxpy, kSmokeReverse};
  return request;
}

}  // namespace fl::test
