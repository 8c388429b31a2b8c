#include "runtime/cuda_paths.hpp"

#include <cstdlib>

namespace fl::runtime {

std::filesystem::path cuda_home() {
  if (char const* env = std::getenv("CUDA_HOME"); env != nullptr && *env != '\0') return env;
#ifdef FA_CUDA_HOME
  return FA_CUDA_HOME;
#else
  return "/usr/local/cuda";
#endif
}

std::vector<std::filesystem::path> cuda_include_dirs() {
  auto const include = cuda_home() / "include";
  return {include, include / "cccl"};
}

}  // namespace fl::runtime
