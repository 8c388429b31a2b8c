#include "runtime/compile_request.hpp"

#include <nvrtc.h>

#include <algorithm>

#include "common/sha256.hpp"
#include "runtime/cuda_paths.hpp"

namespace fl::runtime {
namespace {

// Bumped when the canonical layout changes, so old cache rows can never match a new key by accident.
constexpr char const* kKeyFormat = "flashlab-compile-key v1";

// Keeps the canonical form one item per line whatever a define or option contains.
std::string escape_line(std::string const& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped.push_back(c);
    }
  }
  return escaped;
}

}  // namespace

CompileRequest make_compile_request(KernelSource const& source, TargetArch arch) {
  CompileRequest request;
  request.program_name = source.main.path;
  request.source = source.main.text;
  request.headers = source.includes;
  request.arch = arch;
  return request;
}

std::vector<std::string> compile_options(CompileRequest const& request) {
  std::vector<std::string> options = {
      "--gpu-architecture=" + std::string(arch_name(request.arch)), "--std=c++20",
      "--ptxas-options=--verbose",  // per-function registers, smem, spills: parsed by ptxas_report
  };
  if (request.line_info) options.emplace_back("-lineinfo");
  for (auto const& dir : cuda_include_dirs()) options.push_back("-I" + dir.string());
  if (!request.kernels_include_dir.empty()) options.push_back("-I" + request.kernels_include_dir.string());
  for (auto const& [name, value] : request.defines) options.push_back("-D" + name + "=" + value);
  options.insert(options.end(), request.extra_options.begin(), request.extra_options.end());
  return options;
}

std::string nvrtc_version() {
  int major = 0;
  int minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

CacheKeyMaterial cache_key_material(CompileRequest const& request) {
  std::string const kernels_include = "-I" + request.kernels_include_dir.string();
  std::string canonical = std::string(kKeyFormat) + "\n";
  auto const add = [&canonical](std::string const& key, std::string const& value) {
    canonical += key + "=" + escape_line(value) + "\n";
  };
  add("nvrtc", nvrtc_version());
  add("arch", std::string(arch_name(request.arch)));
  add("program", request.program_name);
  add("source_sha256", common::sha256_hex(request.source));
  auto headers = request.headers;
  std::sort(headers.begin(), headers.end(), [](auto const& a, auto const& b) { return a.path < b.path; });
  for (auto const& header : headers) {
    std::string spellings;
    for (auto const& s : header.spellings) spellings += " " + s;
    add("header", header.path + " " + common::sha256_hex(header.text) + spellings);
  }
  for (auto const& option : compile_options(request)) {
    if (!request.kernels_include_dir.empty() && option == kernels_include) continue;  // location, not content
    add("option", option);
  }
  auto expressions = request.name_expressions;
  std::sort(expressions.begin(), expressions.end());
  for (auto const& expression : expressions) add("name_expression", expression);
  return CacheKeyMaterial{canonical, common::sha256_hex(canonical)};
}

}  // namespace fl::runtime
