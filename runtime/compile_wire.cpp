#include "runtime/compile_wire.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace fl::runtime {

namespace {

constexpr std::uint32_t kFormatVersion = 1;

class Writer {
 public:
  void u64(std::uint64_t v) { bytes_.append(reinterpret_cast<char const*>(&v), sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    bytes_.append(s);
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(std::string const& bytes) : bytes_(bytes) {}
  std::uint64_t u64() {
    if (bytes_.size() - at_ < sizeof(std::uint64_t)) throw std::runtime_error("truncated message");
    std::uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string str() {
    auto const n = u64();
    if (n > bytes_.size() - at_) throw std::runtime_error("truncated message");
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }

 private:
  std::string const& bytes_;
  std::size_t at_ = 0;
};

Error worker_error(std::string message) {
  return Error{"compile", std::move(message), ""};
}

}  // namespace

std::string encode_request(CompileRequest const& r) {
  Writer w;
  w.u64(kFormatVersion);
  w.str(r.program_name);
  w.str(r.source);
  w.u64(r.headers.size());
  for (auto const& h : r.headers) {
    w.str(h.path);
    w.str(h.text);
    w.str(h.sha256);
    w.u64(h.spellings.size());
    for (auto const& s : h.spellings) w.str(s);
  }
  w.str(r.kernels_include_dir.string());
  w.u64(r.defines.size());
  for (auto const& [k, v] : r.defines) {
    w.str(k);
    w.str(v);
  }
  w.u64(r.name_expressions.size());
  for (auto const& e : r.name_expressions) w.str(e);
  w.str(arch_name(r.arch));
  w.u64(r.extra_options.size());
  for (auto const& o : r.extra_options) w.str(o);
  w.u64(r.line_info ? 1 : 0);
  return w.take();
}

Result<CompileRequest> decode_request(std::string const& bytes) {
  try {
    Reader in(bytes);
    if (in.u64() != kFormatVersion) return worker_error("compile worker: another message format version");
    CompileRequest r;
    r.program_name = in.str();
    r.source = in.str();
    r.headers.resize(in.u64());
    for (auto& h : r.headers) {
      h.path = in.str();
      h.text = in.str();
      h.sha256 = in.str();
      h.spellings.resize(in.u64());
      for (auto& s : h.spellings) s = in.str();
    }
    r.kernels_include_dir = in.str();
    for (auto n = in.u64(); n > 0; --n) {
      auto key = in.str();
      r.defines[key] = in.str();
    }
    r.name_expressions.resize(in.u64());
    for (auto& e : r.name_expressions) e = in.str();
    auto arch = parse_target_arch(in.str());
    if (!arch) return arch.error();
    r.arch = arch.value();
    r.extra_options.resize(in.u64());
    for (auto& o : r.extra_options) o = in.str();
    r.line_info = in.u64() != 0;
    return r;
  } catch (std::exception const& e) {
    return worker_error(std::string("compile worker: bad request: ") + e.what());
  }
}

std::string encode_result(Result<CompiledProgram> const& result) {
  Writer w;
  w.u64(kFormatVersion);
  w.u64(result ? 1 : 0);
  if (!result) {
    w.str(result.error().stage);
    w.str(result.error().message);
    w.str(result.error().log);
    return w.take();
  }
  auto const& p = result.value();
  w.str(p.program_name);
  w.str(arch_name(p.arch));
  w.str(std::string_view(p.cubin.data(), p.cubin.size()));
  w.str(p.log);
  w.u64(p.lowered_names.size());
  for (auto const& [k, v] : p.lowered_names) {
    w.str(k);
    w.str(v);
  }
  std::uint64_t ms_bits = 0;
  static_assert(sizeof ms_bits == sizeof p.compile_ms);
  std::memcpy(&ms_bits, &p.compile_ms, sizeof ms_bits);
  w.u64(ms_bits);
  w.str(p.nvrtc_version);
  w.u64(p.options.size());
  for (auto const& o : p.options) w.str(o);
  return w.take();
}

Result<CompiledProgram> decode_result(std::string const& bytes) {
  try {
    Reader in(bytes);
    if (in.u64() != kFormatVersion) return worker_error("compile worker: another message format version");
    if (in.u64() == 0) {
      Error e;
      e.stage = in.str();
      e.message = in.str();
      e.log = in.str();
      return e;
    }
    CompiledProgram p;
    p.program_name = in.str();
    auto arch = parse_target_arch(in.str());
    if (!arch) return arch.error();
    p.arch = arch.value();
    auto const cubin = in.str();
    p.cubin.assign(cubin.begin(), cubin.end());
    p.log = in.str();
    for (auto n = in.u64(); n > 0; --n) {
      auto key = in.str();
      p.lowered_names[key] = in.str();
    }
    auto const ms_bits = in.u64();
    std::memcpy(&p.compile_ms, &ms_bits, sizeof ms_bits);
    p.nvrtc_version = in.str();
    p.options.resize(in.u64());
    for (auto& o : p.options) o = in.str();
    // The same parse as the in-process compile (nvrtc_compiler.cpp): the resources come from the log.
    p.resources = parse_ptxas_report(p.log);
    return p;
  } catch (std::exception const& e) {
    return worker_error(std::string("compile worker: bad answer: ") + e.what());
  }
}

}  // namespace fl::runtime
