#pragma once
// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") on first use and never linked, so
// that every binary starts (and compiles, prunes, checks on the CPU) on a machine without an NVIDIA
// driver. cuda.h is used for types, enums and the declarations that decltype reads; no driver function is
// ever called by name, so the linker never asks for libcuda.
#include <cuda.h>

#include <string>
#include <string_view>

#include "runtime/result.hpp"

namespace fl::runtime {

inline constexpr char const* kDriverLibraryName = "libcuda.so.1";

// One pointer per entry point we use. cuda.h maps several names to versioned symbols (cuMemAlloc ->
// cuMemAlloc_v2, cuEventElapsedTime -> cuEventElapsedTime_v2, ...); the members carry the mapped names
// and are resolved under them, so the signature and the symbol always agree.
struct DriverApi {
#define FL_DRIVER_ENTRY(fn) decltype(&::fn) fn = nullptr;
#include "runtime/driver_entry_points.inc"
#undef FL_DRIVER_ENTRY

  void* library_handle = nullptr;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0
  int device_count = 0;
};

// Loads `library_name`, resolves every entry point, runs cuInit and counts devices. Errors are one line:
// "no CUDA driver: <dlerror>" when the library or a symbol is missing, "no CUDA device: ..." when the
// driver loads but has no usable device. The name is a parameter so tests can take the no-driver path.
// The library stays loaded for the life of the process (driver objects outlive any one caller).
Result<DriverApi> load_driver_api(std::string const& library_name);

// The process-wide driver, loaded once from kDriverLibraryName (thread-safe); later calls return the
// same outcome, so a missing driver is reported identically everywhere.
Result<DriverApi const*> driver_api();

// "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)".
std::string describe_driver_error(DriverApi const& api, CUresult code, std::string_view call);

// An Error for stage `stage` from a failed driver call.
Error driver_error(DriverApi const& api, CUresult code, std::string_view call, std::string stage);

// Success, or the driver error of `code` for stage `stage`.
Status check_driver(DriverApi const& api, CUresult code, std::string_view call, std::string stage);

// For commands: the driver, or print the one-line reason on stderr and exit with kExitNoGpu.
DriverApi const& driver_api_or_exit();

// For commands: print error.message (already one line, e.g. "no CUDA driver: ...") on stderr and exit
// with kExitNoGpu (3).
[[noreturn]] void exit_no_gpu(Error const& error);

}  // namespace fl::runtime
