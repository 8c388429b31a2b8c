#include "runtime/module.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

namespace fl::runtime {
namespace {

constexpr std::size_t kDriverLogBytes = 8192;

// The ELF64 header fields that say how long the image must be (ELF specification, "ELF Header").
constexpr std::size_t kElf64HeaderBytes = 64;
constexpr std::size_t kElfClassOffset = 4;
constexpr unsigned char kElfClass64 = 2;
constexpr std::size_t kSectionTableOffset = 0x28;  // e_shoff, 8 bytes
constexpr std::size_t kSectionEntrySizeOffset = 0x3A;  // e_shentsize, 2 bytes
constexpr std::size_t kSectionCountOffset = 0x3C;      // e_shnum, 2 bytes

template <class T>
T read_little_endian(std::span<char const> bytes, std::size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof(T));  // x86-64 and aarch64 hosts are little-endian
  return value;
}

Error load_error(std::string message, std::string log = {}) {
  return Error{"load", std::move(message), std::move(log)};
}

// A truncated or overwritten CUBIN must come back as an Error: the driver is not promised to survive one.
std::optional<Error> check_elf_image(std::span<char const> cubin) {
  if (cubin.size() < kElf64HeaderBytes) return load_error("CUBIN of " + std::to_string(cubin.size()) + " bytes is too short");
  if (std::memcmp(cubin.data(), "\x7f" "ELF", 4) != 0) return load_error("CUBIN is not an ELF image");
  if (static_cast<unsigned char>(cubin[kElfClassOffset]) != kElfClass64) return load_error("CUBIN is not ELF64");
  auto const table = read_little_endian<std::uint64_t>(cubin, kSectionTableOffset);
  auto const entry = read_little_endian<std::uint16_t>(cubin, kSectionEntrySizeOffset);
  auto const count = read_little_endian<std::uint16_t>(cubin, kSectionCountOffset);
  std::uint64_t const end = table + std::uint64_t{entry} * count;
  if (table > cubin.size() || end > cubin.size()) {
    return load_error("CUBIN is truncated: its section table ends at byte " + std::to_string(end) + " of " +
                      std::to_string(cubin.size()));
  }
  return std::nullopt;
}

}  // namespace

Result<LoadedModule> LoadedModule::load(std::span<char const> cubin) {
  auto loaded = driver_api();
  if (!loaded.ok()) return loaded.error();
  DriverApi const* api = loaded.value();
  if (auto bad = check_elf_image(cubin)) return *bad;

  std::array<char, kDriverLogBytes> error_log{};
  std::array<char, kDriverLogBytes> info_log{};
  std::array<CUjit_option, 4> options = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                                         CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  std::array<void*, 4> values = {error_log.data(), reinterpret_cast<void*>(error_log.size()), info_log.data(),
                                 reinterpret_cast<void*>(info_log.size())};
  CUmodule module = nullptr;
  CUresult const rc = api->cuModuleLoadDataEx(&module, cubin.data(), static_cast<unsigned>(options.size()),
                                              options.data(), values.data());
  if (rc != CUDA_SUCCESS) {
    return load_error(describe_driver_error(*api, rc, "cuModuleLoadDataEx"),
                      std::string(error_log.data()) + std::string(info_log.data()));
  }
  return LoadedModule(api, module);
}

LoadedModule::LoadedModule(LoadedModule&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)), module_(std::exchange(other.module_, nullptr)) {}

LoadedModule& LoadedModule::operator=(LoadedModule&& other) noexcept {
  if (this != &other) {
    unload();
    api_ = std::exchange(other.api_, nullptr);
    module_ = std::exchange(other.module_, nullptr);
  }
  return *this;
}

LoadedModule::~LoadedModule() { unload(); }

void LoadedModule::unload() {
  if (module_ == nullptr) return;
  api_->cuModuleUnload(module_);
  module_ = nullptr;
}

Result<Kernel> LoadedModule::kernel(std::string const& lowered_name) const {
  CUfunction function = nullptr;
  if (CUresult rc = api_->cuModuleGetFunction(&function, module_, lowered_name.c_str()); rc != CUDA_SUCCESS) {
    return Error{"kernel", describe_driver_error(*api_, rc, "cuModuleGetFunction(" + lowered_name + ")"), ""};
  }
  return Kernel(api_, function, lowered_name);
}

Result<int> Kernel::attribute(CUfunction_attribute attribute) const {
  int value = 0;
  if (CUresult rc = api_->cuFuncGetAttribute(&value, attribute, function_); rc != CUDA_SUCCESS) {
    return driver_error(*api_, rc, "cuFuncGetAttribute", "kernel");
  }
  return value;
}

Status Kernel::set_max_dynamic_shared_bytes(std::size_t bytes) {
  CUresult const rc =
      api_->cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes));
  if (rc != CUDA_SUCCESS) {
    return driver_error(*api_, rc, "cuFuncSetAttribute(max dynamic shared = " + std::to_string(bytes) + ")", "launch");
  }
  opted_in_shared_bytes_ = bytes;
  return {};
}

Result<int> Kernel::max_active_blocks_per_sm(int block_threads, std::size_t dynamic_shared_bytes) const {
  int blocks = 0;
  CUresult const rc =
      api_->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function_, block_threads, dynamic_shared_bytes);
  if (rc != CUDA_SUCCESS) return driver_error(*api_, rc, "cuOccupancyMaxActiveBlocksPerMultiprocessor", "kernel");
  return blocks;
}

Status launch(Kernel& kernel, LaunchConfig const& config, std::span<void*> args) {
  // Only when the limit must move: a timing loop must not pay for a driver call per launch.
  std::size_t const wanted = config.dynamic_shared_bytes;
  bool const needs_opt_in = wanted > kernel.opted_in_shared_bytes_ ||
                            (config.opt_in_shared && wanted != kernel.opted_in_shared_bytes_);
  if (needs_opt_in) {
    if (auto raised = kernel.set_max_dynamic_shared_bytes(config.dynamic_shared_bytes); !raised.ok()) return raised;
  }
  DriverApi const& api = *kernel.api_;
  CUresult const rc = api.cuLaunchKernel(kernel.function_, config.grid.x, config.grid.y, config.grid.z,
                                         config.block.x, config.block.y, config.block.z,
                                         static_cast<unsigned>(config.dynamic_shared_bytes), config.stream,
                                         args.data(), nullptr);
  if (rc != CUDA_SUCCESS) return driver_error(api, rc, "cuLaunchKernel(" + kernel.name() + ")", "launch");
  return {};
}

}  // namespace fl::runtime
