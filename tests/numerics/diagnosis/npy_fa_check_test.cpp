// fa-check names a bug from .npy files alone. The files are written here by a minimal .npy writer of the
// test's own (not the project's numerics/npy), from outputs of a mutant, then fa-check runs as a separate
// process and its JSON report must list the mutant first under "diagnosis".
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "numerics/emulator/emulator.hpp"
#include "numerics/input_families.hpp"
#include "tests/tool_process.hpp"

namespace {

using namespace fl::numerics;
namespace emu = fl::numerics::emulator;
namespace fs = std::filesystem;

// NumPy format 1.0: magic, version, little-endian header length, a Python dict padded with spaces to a
// multiple of 64 bytes ending in '\n', then raw little-endian float32 in C order.
void write_float32_npy(fs::path const& path, std::vector<std::size_t> const& shape,
                       std::vector<double> const& values) {
  std::string dims;
  for (std::size_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.erase(dims.size() - 2);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  std::size_t const prefix = 10;  // magic (6) + version (2) + header length (2)
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  auto const length = static_cast<std::uint16_t>(header.size());
  char const length_bytes[2] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  out.write(length_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (double v : values) {
    float const f = static_cast<float>(v);
    unsigned char bytes[4];
    std::memcpy(bytes, &f, 4);  // this test runs on little-endian hosts (x86-64, aarch64 Linux)
    out.write(reinterpret_cast<char const*>(bytes), 4);
  }
}

fs::path fa_check_binary() {
  return fl::test::sibling_binary("fa-check");
}

std::string read_file(fs::path const& p) {
  return fl::test::read_text(p);
}

std::string first_diagnosis(std::string const& json) {
  return fl::test::first_diagnosis_id(json);
}

struct Written {
  fs::path dir;
  std::string args;
};

Written write_case(std::string const& tag, AttentionInputs const& in, AttentionOutputs const& out,
                   bool backward) {
  fs::path const dir = fs::temp_directory_path() / ("fl_npy_" + tag + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fl::common::AttentionShape const& s = in.shape;
  std::vector<std::size_t> const qshape{std::size_t(s.batch), std::size_t(s.heads_q), std::size_t(s.seqlen_q),
                                        std::size_t(s.head_dim)};
  std::vector<std::size_t> const kshape{std::size_t(s.batch), std::size_t(s.heads_kv),
                                        std::size_t(s.seqlen_k), std::size_t(s.head_dim)};
  write_float32_npy(dir / "q.npy", qshape, in.q);
  write_float32_npy(dir / "k.npy", kshape, in.k);
  write_float32_npy(dir / "v.npy", kshape, in.v);
  write_float32_npy(dir / "o.npy", qshape, out.o);
  write_float32_npy(dir / "lse.npy", {qshape[0], qshape[1], qshape[2]}, out.lse);
  std::string args = " --q " + (dir / "q.npy").string() + " --k " + (dir / "k.npy").string() + " --v " +
                     (dir / "v.npy").string() + " --o " + (dir / "o.npy").string() + " --lse " +
                     (dir / "lse.npy").string();
  if (backward) {
    write_float32_npy(dir / "do.npy", qshape, in.d_o);
    write_float32_npy(dir / "dq.npy", qshape, out.dq);
    write_float32_npy(dir / "dk.npy", kshape, out.dk);
    write_float32_npy(dir / "dv.npy", kshape, out.dv);
    for (char const* name : {"do", "dq", "dk", "dv"})
      args += std::string(" --") + name + " " + (dir / (std::string(name) + ".npy")).string();
  }
  return {dir, args};
}

void check_named(fl::numerics::mutants::MutantId id, InputFamily family, bool causal, bool backward) {
  FamilyRequest r;
  r.shape.heads_q = 2;
  r.shape.heads_kv = 1;
  r.shape.seqlen_q = r.shape.seqlen_k = 96;
  r.shape.head_dim = 32;
  r.shape.causal = causal;
  r.seed = 11;
  r.precision = fl::common::Precision::fp16;
  r.with_backward = backward;
  AttentionInputs const in = generate_family(family, r).inputs;
  // A tile size outside the default candidates (16..256), handed to fa-check with --block-n.
  emu::EmulatorConfig const config{fl::common::Precision::fp16,
                                   {64, 48},
                                   emu::LoopOrder::fa2,
                                   fl::numerics::mutants::MutantSet::only(id),
                                   1};
  AttentionOutputs const out = emu::emulate(in, config);
  std::string const tag(fl::numerics::mutants::info(id).name);
  Written const files = write_case(tag, in, out, backward);
  fs::path const json = files.dir / "report.json";
  std::string const command = fa_check_binary().string() + files.args + " --dtype fp16" +
                              (causal ? " --causal" : "") + " --block-n 48 --threads 1 --json " +
                              json.string() + " > " + (files.dir / "stdout.txt").string() + " 2>&1";
  int const code = fl::test::shell_exit_code(command);
  INFO(command);
  INFO(read_file(files.dir / "stdout.txt"));
  REQUIRE(code != -1);  // exited normally
  CHECK(code == 1);     // a numerical failure
  CHECK(first_diagnosis(read_file(json)) == tag);
  fs::remove_all(files.dir);
}

}  // namespace

TEST_CASE("fa-check names a forward mutant from .npy files written by an independent writer",
          "[diagnosis][npy]") {
  REQUIRE(fs::exists(fa_check_binary()));
  check_named(fl::numerics::mutants::MutantId::stale_max, InputFamily::max_in_last_block, false, false);
}

TEST_CASE("fa-check names a backward mutant from .npy files written by an independent writer",
          "[diagnosis][npy]") {
  REQUIRE(fs::exists(fa_check_binary()));
  check_named(fl::numerics::mutants::MutantId::bwd_dq_overwrite, InputFamily::normal, true, true);
}
