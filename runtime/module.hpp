#pragma once
// The load and launch stages: CUBIN -> LoadedModule -> Kernel -> launch. A module that fails to load (a
// truncated or corrupt CUBIN from a cache row, a CUBIN for another architecture) is an Error, never a
// crash. Needs a current context (PrimaryContext) for as long as modules and kernels live.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "runtime/driver_api.hpp"
#include "runtime/result.hpp"

namespace fl::runtime {

// Dynamic shared memory a launch may use without opting in (CUDA's default limit on every arch we support).
inline constexpr std::size_t kDefaultDynamicSharedLimit = 48 * 1024;

struct Dim3 {
  unsigned x = 1;
  unsigned y = 1;
  unsigned z = 1;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  std::size_t dynamic_shared_bytes = 0;
  CUstream stream = nullptr;  // the legacy default stream unless given
  // Raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to dynamic_shared_bytes before launching. Done
  // anyway when dynamic_shared_bytes is over kDefaultDynamicSharedLimit.
  bool opt_in_shared = false;
};

class Kernel {
 public:
  std::string const& name() const { return name_; }
  CUfunction handle() const { return function_; }

  // CU_FUNC_ATTRIBUTE_* of the loaded kernel (registers, static shared bytes, max threads per block, ...).
  Result<int> attribute(CUfunction_attribute attribute) const;
  // Allows launches with up to `bytes` of dynamic shared memory (the opt-in above 48 KiB).
  Status set_max_dynamic_shared_bytes(std::size_t bytes);
  // Resident blocks per SM for this block size and dynamic shared memory; 0 means it cannot run.
  Result<int> max_active_blocks_per_sm(int block_threads, std::size_t dynamic_shared_bytes) const;

 private:
  friend class LoadedModule;
  friend Status launch(Kernel& kernel, LaunchConfig const& config, std::span<void*> args);
  Kernel(DriverApi const* api, CUfunction function, std::string name)
      : api_(api), function_(function), name_(std::move(name)) {}

  DriverApi const* api_;
  CUfunction function_;
  std::string name_;
  std::size_t opted_in_shared_bytes_ = kDefaultDynamicSharedLimit;
};

class LoadedModule {
 public:
  // Checks that `cubin` is a whole ELF image before the driver sees it, then cuModuleLoadDataEx with the
  // driver's error log captured into Error.log.
  static Result<LoadedModule> load(std::span<char const> cubin);

  LoadedModule(LoadedModule&& other) noexcept;
  LoadedModule& operator=(LoadedModule&& other) noexcept;
  LoadedModule(LoadedModule const&) = delete;
  LoadedModule& operator=(LoadedModule const&) = delete;
  ~LoadedModule();

  // The kernel by its lowered (mangled) name, e.g. CompiledProgram::lowered_name("ns::k<128>").
  Result<Kernel> kernel(std::string const& lowered_name) const;

 private:
  LoadedModule(DriverApi const* api, CUmodule module) : api_(api), module_(module) {}
  void unload();

  DriverApi const* api_ = nullptr;
  CUmodule module_ = nullptr;
};

// cuLaunchKernel with explicit grid, block and dynamic shared memory; `args` holds one pointer per kernel
// parameter, pointing at its value. Opts in to the shared memory first where the config needs it.
Status launch(Kernel& kernel, LaunchConfig const& config, std::span<void*> args);

// launch(kernel, config, a, b, c): the parameters by value, in order. Each argument's type must be the
// kernel parameter's exact type (CUdeviceptr for a pointer, int not size_t, float not double).
template <class... Args>
Status launch(Kernel& kernel, LaunchConfig const& config, Args const&... args) {
  std::vector<void*> pointers = {const_cast<void*>(static_cast<void const*>(&args))...};
  return launch(kernel, config, std::span<void*>(pointers));
}

}  // namespace fl::runtime
