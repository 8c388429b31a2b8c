// Hidden (tag [.fingerprint]): the fingerprint of every kernel the sm80-era families instantiate, to prove
// that a refactor of kernels_src left the generated code as it was. For each family (fa3_sm90* too, at one
// problem each) it compiles, under NVRTC for sm_80 and sm_90a (sm_89 and sm_90a for FP8), the default and
// the reproducible config of every head dim x mask (bf16, fp16 at d128; both FP8 formats), and at d128 every
// config one tunable away from the default, then the d128 defaults once per FA_MUTANT_ switch the family's
// sources name. One line per kernel: registers, spills, static shared memory, stack, and the SHA-256 of its
// SASS (the ELF section .text.<kernel> of the CUBIN). Run it before and after a change and diff the files:
//   FA_FINGERPRINT_OUT=/tmp/after.txt build/bin/test_kernels_src "[.fingerprint]"
//   FA_KERNELS_DIR=/tmp/base/kernels_src FA_FINGERPRINT_OUT=/tmp/before.txt build/bin/test_kernels_src ...
// FA_FINGERPRINT_FAMILIES=fa1,naive limits it to those families; FA_FINGERPRINT_QUICK=1 to the defaults on
// sm_90a without mutants (a quick look while editing); FA_FINGERPRINT_FA3_ALL=1 gives the fa3_sm90 families
// every head dim x mask x dtype (FP8 included) instead of one problem.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/sha256.hpp"
#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "runtime/kernel_source.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/kernels_src/kernels_support.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;
using runtime::TargetArch;

namespace {

template <typename T>
T read_le(std::vector<char> const& bytes, std::size_t at) {
  T value{};
  if (at + sizeof(T) <= bytes.size()) std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

// SHA-256 (and size) of each ELF64 section ".text.<kernel>" of a CUBIN, by kernel (mangled) name.
std::map<std::string, std::string> text_section_hashes(std::vector<char> const& elf) {
  std::map<std::string, std::string> out;
  auto const shoff = read_le<std::uint64_t>(elf, 0x28);
  auto const shentsize = read_le<std::uint16_t>(elf, 0x3A), shnum = read_le<std::uint16_t>(elf, 0x3C);
  auto const shstrndx = read_le<std::uint16_t>(elf, 0x3E);
  auto const section = [&](unsigned i, unsigned field) { return shoff + i * shentsize + field; };
  auto const names_at = read_le<std::uint64_t>(elf, section(shstrndx, 24));
  for (unsigned i = 0; i < shnum; ++i) {
    std::string const name(elf.data() + names_at + read_le<std::uint32_t>(elf, section(i, 0)));
    if (name.rfind(".text.", 0) != 0) continue;
    auto const offset = read_le<std::uint64_t>(elf, section(i, 24));
    auto const size = read_le<std::uint64_t>(elf, section(i, 32));
    if (offset + size > elf.size()) continue;
    out[name.substr(6)] = common::sha256_hex(std::string_view(elf.data() + offset, size)).substr(0, 16) +
                          " sass_bytes=" + std::to_string(size);
  }
  return out;
}

std::vector<Problem> problems_of(Family const& family) {
  std::vector<Problem> out;
  for (auto direction : {Direction::forward, Direction::backward})
    for (int d : {64, 128, 256})
      for (bool causal : {false, true})
        for (auto dtype : {Precision::bf16, Precision::fp16, Precision::fp8_e4m3, Precision::fp8_e5m2}) {
          if (dtype == Precision::fp16 && d != 128) continue;
          auto p = headline_problem(1024, d, causal, dtype, direction);
          if (!family.unsupported(p)) out.push_back(p);
          for (int n_q : {1, 16}) {  // decode shapes (flash_decode): GQA 32/8 against 8192 keys
            Problem decode = p;
            decode.shape = {1, 32, 8, n_q, 8192, d, causal, 0.0};
            if (family.unsupported(p) && !family.unsupported(decode)) out.push_back(decode);
          }
        }
  // The include check only, unless FA_FINGERPRINT_FA3_ALL asks for every head dim, mask and dtype (FP8 per
  // tensor and per 128-row block).
  if (family.name().rfind("fa3_sm90", 0) == 0 && !out.empty()) {
    if (!std::getenv("FA_FINGERPRINT_FA3_ALL")) {
      out.resize(1);
    } else {
      for (std::size_t i = 0, n = out.size(); i < n; ++i)
        if (common::is_fp8(out[i].dtype)) {
          Problem block = out[i];
          block.fp8.scaling = common::Fp8Scaling::per_block;
          block.fp8.block_rows = 128;
          if (!family.unsupported(block)) out.push_back(block);
        }
    }
  }
  return out;
}

// Default and reproducible configs of every problem; at d128 also each config one tunable (or precision
// option) away.
std::vector<std::pair<Config, Problem>> configs_of(Family const& family, bool neighbours) {
  std::vector<std::pair<Config, Problem>> out;
  auto axes = family.parameters();
  for (auto const& option : family.precision_options()) axes.push_back(option);
  for (auto const& p : problems_of(family)) {
    std::vector<Config> configs{family.default_config(p), family.reproducible_config(p)};
    if (neighbours && p.shape.head_dim == 128 && family.name().rfind("fa3_sm90", 0) != 0)
      for (auto const& param : axes)
        for (int value : param.values) {
          Config c = family.default_config(p);
          c[param.name] = value;
          if (!family.violates(c, p)) configs.push_back(c);
        }
    for (auto const& c : configs) out.emplace_back(c, p);
  }
  return out;
}

std::vector<TargetArch> arches_of(Family const& family) {
  if (family.name().rfind("fa3_sm90", 0) == 0) return {TargetArch::sm_90a};
  if (family.name() == "fa2_fp8") return {TargetArch::sm_89, TargetArch::sm_90a};
  return {TargetArch::sm_80, TargetArch::sm_90a};
}

// Every FA_MUTANT_<ID> that the family's source (its main file and every header it includes) names.
std::set<std::string> mutant_switches_of(std::string const& file) {
  auto source = runtime::load_kernel_source(file, test::kernels_dir());
  REQUIRE(source);
  std::set<std::string> out;
  std::regex const use("FA_MUTANT_[A-Z0-9_]+");
  auto scan = [&](std::string const& text) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), use); it != std::sregex_iterator(); ++it)
      out.insert(it->str());
  };
  scan(source->main.text);
  for (auto const& h : source->includes) scan(h.text);
  return out;
}

// One program per (source file, arch, mutant) holding every kernel of `configs`; appends a line a kernel.
void fingerprint(Family const& family, std::vector<std::pair<Config, Problem>> const& configs,
                 TargetArch arch, std::string const& mutant, std::set<std::string>& lines) {
  std::map<std::string, std::set<std::string>> names_by_file;
  std::map<std::string, std::pair<Config, Problem>> first_of_file;
  for (auto const& [c, p] : configs) {
    auto const file = family.source_file(p);
    for (auto const& n : family.name_expressions(c, p)) names_by_file[file].insert(n);
    first_of_file.try_emplace(file, c, p);
  }
  for (auto const& [file, names] : names_by_file) {
    auto const& [c, p] = first_of_file.at(file);
    std::vector<std::string> switches;
    if (!mutant.empty()) switches.push_back(mutant);
    auto request = device::make_family_request(family, c, p, {arch, test::kernels_dir(), switches});
    REQUIRE(request);
    request->name_expressions.assign(names.begin(), names.end());
    auto const program = runtime::compile(request.value());
    INFO(family.name() << " " << file << " " << runtime::arch_name(arch) << " " << mutant
                       << (program ? std::string() : program.error().log));
    REQUIRE(program);
    auto const text = text_section_hashes(program->cubin);
    for (auto const& n : names) {
      auto const* r = program->resources_of(n);
      REQUIRE(r);
      auto const lowered = program->lowered_name(n);
      std::ostringstream line;
      line << family.name() << " " << runtime::arch_name(arch) << " " << (mutant.empty() ? "-" : mutant)
           << " " << n << " regs=" << r->registers << " spill=" << r->spill_store_bytes << "/"
           << r->spill_load_bytes << " smem=" << r->shared_bytes << " stack=" << r->stack_frame_bytes
           << " sass=" << (text.count(lowered) ? text.at(lowered) : std::string("?"));
      lines.insert(line.str());
    }
  }
}

}  // namespace

TEST_CASE("fingerprint of every sm80-era kernel (registers, spills, shared memory, SASS hash)",
          "[.fingerprint]") {
  char const* out_path = std::getenv("FA_FINGERPRINT_OUT");
  REQUIRE(out_path);
  char const* only = std::getenv("FA_FINGERPRINT_FAMILIES");
  std::string const wanted = only ? std::string(",") + only + "," : "";
  bool const quick = std::getenv("FA_FINGERPRINT_QUICK") != nullptr;
  std::set<std::string> lines;
  for (auto const* description : kFamilies) {
    DescribedFamily const family(*description);
    if (!wanted.empty() && wanted.find("," + std::string(family.name()) + ",") == std::string::npos) continue;
    auto const all = configs_of(family, !quick);
    for (auto arch : arches_of(family))
      if (!quick || arch == TargetArch::sm_90a) fingerprint(family, all, arch, "", lines);
    if (quick || family.name().rfind("fa3_sm90", 0) == 0) continue;
    std::vector<std::pair<Config, Problem>> d128;
    for (auto const& [c, p] : configs_of(family, false))
      if (p.shape.head_dim == 128) d128.emplace_back(c, p);
    std::set<std::string> switches;
    for (auto const& [c, p] : d128)
      for (auto const& s : mutant_switches_of(family.source_file(p))) switches.insert(s);
    for (auto const& s : switches) fingerprint(family, d128, TargetArch::sm_90a, s, lines);
  }
  std::ofstream out(out_path);
  for (auto const& l : lines) out << l << "\n";
  CHECK(!lines.empty());
}
