// The smoke family (kernels_src/smoke.cu): the smallest program that exercises the whole pipeline
// (defines, name expressions, dynamic shared memory) so that the compile path, the cache and the
// pruning are tested on every machine, with or without the attention families.
#include "tuner/family/families.hpp"

namespace fl::tuner {

namespace {
// A block covers at most this many elements: a 1M-element smoke problem then still has >= 256 blocks,
// about two per SM on a 132-SM H200.
constexpr std::int64_t kMaxElementsPerBlock = 4096;
}  // namespace

std::string SmokeFamily::name() const {
  return "smoke";
}

std::string SmokeFamily::description() const {
  return "JIT smoke kernels (axpy, shared-memory reverse)";
}

bool SmokeFamily::supports(runtime::TargetArch, ProblemClass const&) const {
  return true;
}

ParameterSpace SmokeFamily::space(ProblemClass const&) const {
  return ParameterSpace(
      {{"kBlockSize", {64, 128, 256, 512, 1024}}, {"kItemsPerThread", {1, 2, 4, 8}}},
      [](Config const& c) { return c.at("kBlockSize") * c.at("kItemsPerThread") <= kMaxElementsPerBlock; });
}

Config SmokeFamily::default_config(ProblemClass const&) const {
  return {{"kBlockSize", 256}, {"kItemsPerThread", 4}};
}

CompileUnit SmokeFamily::compile_unit(Config const& config, ProblemClass const&) const {
  return CompileUnit{
      .kernels_file = "smoke.cu",
      .defines = {{"FA_BLOCK_SIZE", std::to_string(config.at("kBlockSize"))}},
      .name_expressions = {"fl::smoke::vector_axpy<" + std::to_string(config.at("kItemsPerThread")) + ">",
                           "fl::smoke::chunk_reverse"}};
}

std::size_t SmokeFamily::dynamic_shared_bytes(Config const&, ProblemClass const&) const {
  return 0;
}

int SmokeFamily::block_threads(Config const& config, ProblemClass const&) const {
  return static_cast<int>(config.at("kBlockSize"));
}

}  // namespace fl::tuner
