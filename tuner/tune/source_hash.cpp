#include "tuner/tune/source_hash.hpp"

#include "common/sha256.hpp"
#include "runtime/kernel_source.hpp"

namespace fl::tuner {

runtime::Result<std::string> family_source_hash(device::Family const& family, device::Problem const& problem,
                                                std::filesystem::path const& kernels_dir) {
  auto source = runtime::load_kernel_source(family.source_file(problem), kernels_dir);
  if (!source) return source.error();
  // "<sha256> <path>" per file, main first, includes sorted by path (as load_kernel_source returns them).
  std::string manifest = source->main.sha256 + " " + source->main.path + "\n";
  for (auto const& file : source->includes) manifest += file.sha256 + " " + file.path + "\n";
  return common::sha256_hex(manifest);
}

}  // namespace fl::tuner
