#pragma once
// Where the CUDA toolkit's headers are, for NVRTC's -I: kernels include <cuda_fp16.h>, <cuda_bf16.h>,
// <cuda_fp8.h> and libcu++ (<cuda/std/...>, which CUDA 13 keeps under include/cccl).
#include <filesystem>
#include <vector>

namespace fl::runtime {

// $CUDA_HOME, else the toolkit this binary was configured with (FA_CUDA_HOME), else /usr/local/cuda.
std::filesystem::path cuda_home();

// <cuda_home>/include and <cuda_home>/include/cccl.
std::vector<std::filesystem::path> cuda_include_dirs();

}  // namespace fl::runtime
