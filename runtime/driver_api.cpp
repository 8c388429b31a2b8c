#include "runtime/driver_api.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/exit_codes.hpp"

namespace fl::runtime {
namespace {

#define FL_STRINGIFY(x) #x
// Expands cuda.h's mapping first: FL_SYMBOL_NAME(cuMemAlloc) is "cuMemAlloc_v2".
#define FL_SYMBOL_NAME(fn) FL_STRINGIFY(fn)

std::string first_line(std::string text) {
  if (auto const end = text.find('\n'); end != std::string::npos) text.resize(end);
  return text;
}

std::string last_dl_error() {
  char const* message = dlerror();
  return first_line(message != nullptr ? message : "unknown dlopen error");
}

Error no_driver(std::string const& why) {
  return Error{"driver", "no CUDA driver: " + why, ""};
}
Error no_device(std::string const& why) {
  return Error{"device", "no CUDA device: " + why, ""};
}

template <class Fn>
bool resolve(void* handle, Fn& slot, char const* symbol) {
  slot = reinterpret_cast<Fn>(dlsym(handle, symbol));
  return slot != nullptr;
}

}  // namespace

Result<DriverApi> load_driver_api(std::string const& library_name) {
  // RTLD_LOCAL: the driver's symbols must not satisfy anyone else's references by accident.
  void* handle = dlopen(library_name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return no_driver(last_dl_error());

  DriverApi api;
  api.library_handle = handle;
#define FL_DRIVER_ENTRY(fn) resolve(handle, api.fn, FL_SYMBOL_NAME(fn));
#include "runtime/driver_entry_points.inc"
#undef FL_DRIVER_ENTRY
  // cuEventElapsedTime_v2 (CUDA 12.8+) has the signature of the original; an older driver has only that.
  if (api.cuEventElapsedTime == nullptr) resolve(handle, api.cuEventElapsedTime, "cuEventElapsedTime");
  std::string missing;
#define FL_DRIVER_ENTRY(fn) \
  if (api.fn == nullptr && missing.empty()) missing = FL_SYMBOL_NAME(fn);
#include "runtime/driver_entry_points.inc"
#undef FL_DRIVER_ENTRY
  if (!missing.empty()) {
    dlclose(handle);
    return no_driver(library_name + " lacks " + missing + " (a driver older than the CUDA 13 headers?)");
  }

  auto const fail = [&](Error error) {
    dlclose(handle);
    return error;
  };
  if (CUresult rc = api.cuInit(0); rc != CUDA_SUCCESS) {
    return fail(no_device(describe_driver_error(api, rc, "cuInit")));
  }
  if (CUresult rc = api.cuDriverGetVersion(&api.driver_version); rc != CUDA_SUCCESS) {
    return fail(no_driver(describe_driver_error(api, rc, "cuDriverGetVersion")));
  }
  if (CUresult rc = api.cuDeviceGetCount(&api.device_count); rc != CUDA_SUCCESS) {
    return fail(no_device(describe_driver_error(api, rc, "cuDeviceGetCount")));
  }
  if (api.device_count == 0) return fail(no_device("the driver reports 0 devices"));
  return api;
}

Result<DriverApi const*> driver_api() {
  // A function-local static: loaded once, thread-safe, and the same answer for every caller.
  static Result<DriverApi> const loaded = load_driver_api(kDriverLibraryName);
  if (!loaded.ok()) return loaded.error();
  return &loaded.value();
}

std::string describe_driver_error(DriverApi const& api, CUresult code, std::string_view call) {
  char const* name = nullptr;
  char const* text = nullptr;
  if (api.cuGetErrorName != nullptr) api.cuGetErrorName(code, &name);
  if (api.cuGetErrorString != nullptr) api.cuGetErrorString(code, &text);
  std::string described(call);
  described += ": ";
  described += name != nullptr ? name : "CUresult " + std::to_string(static_cast<int>(code));
  if (text != nullptr) described += std::string(" (") + text + ")";
  return described;
}

Error driver_error(DriverApi const& api, CUresult code, std::string_view call, std::string stage) {
  return Error{std::move(stage), describe_driver_error(api, code, call), ""};
}

Status check_driver(DriverApi const& api, CUresult code, std::string_view call, std::string stage) {
  if (code == CUDA_SUCCESS) return {};
  return driver_error(api, code, call, std::move(stage));
}

DriverApi const& driver_api_or_exit() {
  auto api = driver_api();
  if (!api.ok()) exit_no_gpu(api.error());
  return *api.value();
}

void exit_no_gpu(Error const& error) {
  std::fprintf(stderr, "%s\n", first_line(error.message).c_str());
  std::exit(common::kExitNoGpu);
}

}  // namespace fl::runtime
