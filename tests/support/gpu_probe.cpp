#include "tests/support/gpu_probe.hpp"

#include <dlfcn.h>

namespace fl::test {

// A self-contained probe so that the test main links no project library. It follows the same rule as
// runtime/: libcuda.so.1 is opened with dlopen, never linked.
std::optional<std::string> gpu_unavailable_reason() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return std::string("no CUDA driver: ") + dlerror();
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(handle, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(handle, "cuDeviceGetCount"));
  if (init == nullptr || count == nullptr) return std::string("no CUDA driver: libcuda.so.1 lacks cuInit");
  if (int rc = init(0); rc != 0) return "no CUDA device: cuInit failed with CUresult " + std::to_string(rc);
  int devices = 0;
  if (count(&devices) != 0 || devices == 0) return std::string("no CUDA device: the driver reports none");
  return std::nullopt;
}

}  // namespace fl::test
