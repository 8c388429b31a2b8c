#pragma once
// Per-function resources from ptxas' --verbose output (through NVRTC's program log): what the tuner
// prunes on (spills, shared memory over the opt-in limit, registers that forbid the wanted occupancy).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fl::runtime {

struct KernelResources {
  std::string function;  // mangled (lowered) name, as ptxas prints it
  bool is_entry = false;  // a __global__ kernel; false for a non-inlined __device__ function
  int registers = 0;
  int barriers = 0;
  std::size_t shared_bytes = 0;  // static shared memory ("smem"); dynamic shared memory is a launch choice
  std::size_t spill_store_bytes = 0;
  std::size_t spill_load_bytes = 0;
  std::size_t stack_frame_bytes = 0;
  std::size_t constant_bytes = 0;  // sum over the cmem[N] banks the function line lists

  bool spills() const { return spill_store_bytes > 0 || spill_load_bytes > 0; }
};

struct PtxasReport {
  std::vector<KernelResources> functions;  // in the order ptxas reports them

  KernelResources const* find(std::string_view function) const;
  std::vector<KernelResources> entries() const;  // the __global__ kernels only
};

// Parses every function ptxas describes. Understands the CUDA 11-13 layouts: "Compiling entry function
// 'f' for 'sm_80'", "Function properties for f", "N bytes stack frame, N bytes spill stores, N bytes
// spill loads", and "Used N registers[, used N barriers][, N bytes smem][, N bytes cmem[k]]...[, N bytes
// cumulative stack size]" with the items in any order. Lines it does not know are ignored.
PtxasReport parse_ptxas_report(std::string_view log);

}  // namespace fl::runtime
