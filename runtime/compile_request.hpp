#pragma once
// What to compile (one NVRTC program) and the cache key that names everything that can change its result.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runtime/kernel_source.hpp"
#include "runtime/target_arch.hpp"

namespace fl::runtime {

struct CompileRequest {
  std::string program_name = "program.cu";  // NVRTC names it in diagnostics: "smoke.cu(12): error: ..."
  std::string source;
  // kernels_src headers handed to NVRTC from memory, under each of their spellings (see kernel_source.hpp).
  std::vector<SourceFile> headers;
  // Optional -I for kernels_src. Empty by default: headers come from memory so that only hashed text is
  // compiled; an include the scanner missed then fails loudly instead of compiling unhashed text.
  std::filesystem::path kernels_include_dir;
  std::map<std::string, std::string> defines;  // -DNAME=VALUE: the config's constants, FA_MUTANT_<ID>
  std::vector<std::string> name_expressions;   // e.g. "fl::smoke::vector_axpy<256>", lowered after compiling
  TargetArch arch = TargetArch::sm_80;
  std::vector<std::string> extra_options;  // appended verbatim, e.g. "--maxrregcount=128"
  bool line_info = false;                  // -lineinfo, for profilers; part of the cache key
};

// A request for a kernels_src family: program name, main text and every included header.
CompileRequest make_compile_request(KernelSource const& source, TargetArch arch);

// The exact NVRTC option list for `request`, in the order passed.
std::vector<std::string> compile_options(CompileRequest const& request);

// "13.0": the NVRTC library this process uses (not the headers it was built with).
std::string nvrtc_version();

struct CacheKeyMaterial {
  std::string canonical;  // one "key=value" per line, fit for a log or a diff between two keys
  std::string sha256;     // hex SHA-256 of canonical: the compile cache's key
};

// Everything that can change the compile result: NVRTC version, arch, options (defines, include dirs of
// the CUDA toolkit, extra options), name expressions, program name, and the SHA-256 of the main text and
// of every header. Not the kernels dir's location: the same text elsewhere is the same program.
CacheKeyMaterial cache_key_material(CompileRequest const& request);

}  // namespace fl::runtime
