#pragma once
// Kernel source text as NVRTC will see it: the main file of a kernel family plus every kernels_src header
// it includes (followed recursively), each with its SHA-256. What is hashed is exactly what is compiled:
// the headers are handed to NVRTC from memory, so a file edited between hashing and compiling cannot
// slip into a cached CUBIN under the old key.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runtime/result.hpp"

namespace fl::runtime {

inline constexpr char const* kKernelsDirEnv = "FA_KERNELS_DIR";

struct SourceFile {
  std::string path;                    // relative to kernels_dir, '/'-separated
  std::vector<std::string> spellings;  // every "name" it is #included by (NVRTC matches headers by these)
  std::string text;
  std::string sha256;  // hex SHA-256 of text
};

struct KernelSource {
  std::filesystem::path kernels_dir;
  SourceFile main;
  std::vector<SourceFile> includes;  // every kernels_src file reached by #include "...", sorted by path
};

// Where kernels_src lives, first hit wins: `explicit_dir` (e.g. --kernels-dir), env FA_KERNELS_DIR,
// <exe dir>/../kernels_src, <exe dir>/kernels_src, the source tree this binary was built from
// (FA_SOURCE_KERNELS_DIR). An explicit dir or env value that is not a directory is an error rather than
// a silent fallback: the user asked for it.
Result<std::filesystem::path> resolve_kernels_dir(std::optional<std::filesystem::path> const& explicit_dir = {});

// Reads kernels_dir/name and follows its quoted includes recursively. A quoted include is looked up next
// to the including file, then at kernels_dir; one not found there is left to NVRTC's own include path
// (the CUDA headers). Fails (stage "source") when the main file or an included file cannot be read, when
// an include resolves outside kernels_dir, or when one spelling names two different files.
Result<KernelSource> load_kernel_source(std::string const& name, std::filesystem::path const& kernels_dir);

}  // namespace fl::runtime
