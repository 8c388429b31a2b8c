#pragma once
// Records and keys for the compile cache tests.
#include <cstdint>
#include <random>
#include <string>

#include "db/compile_record.hpp"

namespace fl::db::test {

// A key of the right form, distinct for each seed.
inline std::string key_for(std::uint32_t seed) {
  std::string key(64, '0');
  std::mt19937 generator(seed);
  constexpr char kHex[] = "0123456789abcdef";
  for (char& c : key) c = kHex[generator() % 16];
  return key;
}

// A record with a CUBIN of `cubin_bytes` pseudo-random bytes and two kernels.
inline CompileRecord make_record(std::size_t cubin_bytes, std::uint32_t seed = 1) {
  CompileRecord record;
  record.program_name = "fa2_sm80_fwd";
  record.arch = "sm_90a";
  record.nvrtc_version = "13.0";
  record.options = "--gpu-architecture=sm_90a\n-DkBlockM=128\n-DkBlockN=64";
  record.source_hashes = std::string(64, 'c') + " kernels_src/fa2_sm80.cuh";
  record.cubin.resize(cubin_bytes);
  std::mt19937 generator(seed);
  for (char& byte : record.cubin) byte = static_cast<char>(generator() & 0xffu);
  record.compile_log = "ptxas info    : Used 168 registers, 0 bytes spill stores";
  record.kernel_resources["_Z7fa2_fwdILi128ELi64EEvv"] = {168, 49152, 0, 0, 0};
  record.kernel_resources["_Z7fa2_fwdILi64ELi64EEvv"] = {96, 24576, 8, 8, 16};
  record.lowered_names["fa2_fwd<128, 64>"] = "_Z7fa2_fwdILi128ELi64EEvv";
  record.lowered_names["fa2_fwd<64, 64>"] = "_Z7fa2_fwdILi64ELi64EEvv";
  record.compile_ms = 312.5;
  return record;
}

}  // namespace fl::db::test
