#pragma once
// What the compile cache stores for one NVRTC compilation. Plain data: db/ cannot include runtime/, so
// runtime/'s results are copied into these structs by the caller (tuner/ or runtime's user).
#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fl::db {

// ptxas' resource report for one kernel (--ptxas-options=--verbose).
struct KernelResources {
  std::int64_t registers = 0;
  std::int64_t shared_bytes = 0;  // static shared memory
  std::int64_t spill_stores = 0;  // bytes
  std::int64_t spill_loads = 0;   // bytes
  std::int64_t stack_bytes = 0;
  friend bool operator==(KernelResources const&, KernelResources const&) = default;
};

struct CompileRecord {
  // Descriptive, for humans reading the table (the cache key already covers all of it).
  std::string program_name;
  std::string arch;           // e.g. "sm_90a"
  std::string nvrtc_version;  // e.g. "13.0"
  std::string options;        // NVRTC options, one per line
  std::string source_hashes;  // "<sha256> <kernels_src file>" lines

  // The value.
  std::vector<char> cubin;
  std::string compile_log;                                  // NVRTC's full log, warnings included
  std::map<std::string, KernelResources> kernel_resources;  // lowered (mangled) name -> resources
  std::map<std::string, std::string> lowered_names;         // name expression -> lowered name
  double compile_ms = 0.0;

  // Set by CompileCache::store (ISO 8601 UTC); ignored on input, filled by lookup.
  std::string created_at;

  friend bool operator==(CompileRecord const&, CompileRecord const&) = default;
};

}  // namespace fl::db
