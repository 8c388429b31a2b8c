#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "common/npy.hpp"
#include "numerics/input_families.hpp"
#include "numerics/standard_attention.hpp"
#include "tests/numerics/test_inputs.hpp"
#include "tests/tool_process.hpp"

using namespace fl::numerics;
using fl::numerics::test::make_shape;

namespace {

std::filesystem::path fa_check_binary() {
  return fl::test::sibling_binary("fa-check");
}

int run(std::string const& args) {
  return fl::test::shell_exit_code(fa_check_binary().string() + " " + args + " > /dev/null 2>&1");
}

std::string slurp(std::filesystem::path const& p) {
  return fl::test::read_text(p);
}

struct Case {
  std::filesystem::path dir;
  AttentionInputs inputs;
  AttentionOutputs outputs;
  std::string args;  // the file options

  Case(std::string const& name, bool backward) {
    dir = std::filesystem::temp_directory_path() / ("fl_fa_check_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    FamilyRequest r;
    r.shape = make_shape(2, 4, 2, 48, 80, 16, true);
    r.precision = fl::common::Precision::bf16;
    r.with_backward = backward;
    r.seed = 9;
    inputs = generate_family(InputFamily::max_in_last_block, r).inputs;
    outputs = standard_attention(inputs, recipe_for(fl::common::Precision::bf16));
    std::vector<std::size_t> const q = {2, 4, 48, 16}, k = {2, 2, 80, 16}, l = {2, 4, 48};
    write("q", q, inputs.q);
    write("k", k, inputs.k);
    write("v", k, inputs.v);
    write("o", q, outputs.o);
    write("lse", l, outputs.lse);
    if (backward) {
      write("do", q, inputs.d_o);
      write("dq", q, outputs.dq);
      write("dk", k, outputs.dk);
      write("dv", k, outputs.dv);
    }
  }
  ~Case() { std::filesystem::remove_all(dir); }
  void write(std::string const& what, std::vector<std::size_t> const& shape, std::vector<double> const& v,
             fl::common::NpyDtype dt = fl::common::NpyDtype::float32) {
    fl::common::write_npy(dir / (what + ".npy"), shape, v, dt);
    args += " --" + what + " " + (dir / (what + ".npy")).string();
  }
};

// An independent .npy writer, byte by byte as numpy.save does (format 1.0, '<f4', header padded with
// spaces to a multiple of 64 bytes and ended by '\n'): fa-check must read files from outside the project.
void write_numpy_style(std::filesystem::path const& path, std::vector<std::size_t> const& shape,
                       std::vector<double> const& values) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i)
    dict += std::to_string(shape[i]) + (i + 1 < shape.size() ? ", " : "");
  dict += shape.size() == 1 ? ",), }" : "), }";
  std::size_t const unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  out.put(char(dict.size() & 0xff));
  out.put(char(dict.size() >> 8));
  out << dict;
  for (double v : values) {
    float const f = float(v);
    unsigned char b[4];
    std::memcpy(b, &f, 4);
    out.write(reinterpret_cast<char const*>(b), 4);
  }
}

}  // namespace

TEST_CASE("fa-check reads files written byte by byte as NumPy writes them", "[numerics][fa-check]") {
  Case c("numpy_style", false);
  std::vector<std::size_t> const q = {2, 4, 48, 16}, k = {2, 2, 80, 16};
  write_numpy_style(c.dir / "q.npy", q, c.inputs.q);
  write_numpy_style(c.dir / "k.npy", k, c.inputs.k);
  write_numpy_style(c.dir / "v.npy", k, c.inputs.v);
  write_numpy_style(c.dir / "o.npy", q, c.outputs.o);
  write_numpy_style(c.dir / "lse.npy", {2, 4, 48}, c.outputs.lse);
  CHECK(run(c.args + " --dtype bf16 --causal") == 0);
  std::vector<double> o = c.outputs.o;
  o[100] += 1.0;
  write_numpy_style(c.dir / "o.npy", q, o);
  CHECK(run(c.args + " --dtype bf16 --causal") == 1);
}

TEST_CASE("fa-check passes a correct bf16 forward and backward, and says so in JSON",
          "[numerics][fa-check]") {
  Case c("pass", true);
  std::filesystem::path const json = c.dir / "r.json";
  CHECK(run(c.args + " --dtype bf16 --causal --json " + json.string()) == 0);
  std::string const j = slurp(json);
  CHECK(j.find("\"verdict\":\"pass\"") != std::string::npos);
  CHECK(j.find("\"dK\":{") != std::string::npos);
  CHECK(j.find("\"diagnosis\":[]") != std::string::npos);
  CHECK(j.find("bottom-right") != std::string::npos);
  // Without --causal the same outputs are wrong: a numerical failure, exit 1.
  CHECK(run(c.args + " --dtype bf16 --json " + json.string()) == 1);
  CHECK(slurp(json).find("\"verdict\":\"fail\"") != std::string::npos);
}

TEST_CASE("fa-check fails a wrong output with exit 1 and names the row", "[numerics][fa-check]") {
  Case c("fail", false);
  std::vector<double> o = c.outputs.o;
  for (std::size_t e = 0; e < 16; ++e) o[(1 * 48 + 40) * 16 + e] *= 0.5;  // batch 0, head 1, row 40
  fl::common::write_npy(c.dir / "o.npy", {2, 4, 48, 16}, o);
  std::filesystem::path const json = c.dir / "r.json";
  CHECK(run(c.args + " --dtype bf16 --causal --json " + json.string()) == 1);
  std::string const j = slurp(json);
  CHECK(j.find("\"failing_rows\":[88]") != std::string::npos);
  CHECK(j.find("keys visible") != std::string::npos);
}

TEST_CASE("fa-check exits 2 on bad input with one clear line", "[numerics][fa-check]") {
  Case c("bad", false);
  std::string const base = c.args + " --dtype bf16 --causal";
  CHECK(run(base + " --q " + (c.dir / "q.npy").string()) == 2);  // an option given twice
  // Missing file.
  std::string missing = c.args;
  missing.replace(missing.find(" --o "), 5, " --o /nonexistent/");
  CHECK(run(missing + " --dtype bf16") == 2);
  // Wrong shape: O with 3 heads.
  fl::common::write_npy(c.dir / "o_bad.npy", {2, 3, 48, 16}, std::vector<double>(2 * 3 * 48 * 16, 0.0));
  std::string wrong = c.args;
  wrong.replace(wrong.find("o.npy"), 5, "o_bad.npy");
  CHECK(run(wrong + " --dtype bf16 --causal") == 2);
  // LSE with the wrong length.
  fl::common::write_npy(c.dir / "lse_bad.npy", {2, 4, 47}, std::vector<double>(2 * 4 * 47, 0.0));
  std::string wrong_lse = c.args;
  wrong_lse.replace(wrong_lse.find("lse.npy"), 7, "lse_bad.npy");
  CHECK(run(wrong_lse + " --dtype bf16 --causal") == 2);
  // NaN in an input.
  std::vector<double> v = c.inputs.v;
  v[5] = std::nan("");
  fl::common::write_npy(c.dir / "v.npy", {2, 2, 80, 16}, v);
  CHECK(run(base) == 2);
  fl::common::write_npy(c.dir / "v.npy", {2, 2, 80, 16}, c.inputs.v);
  CHECK(run(base) == 0);
  CHECK(run(c.args + " --dtype fp4") == 2);
  CHECK(run(c.args + " --dtype bf16 --scale -1") == 2);
  CHECK(run(c.args + " --dtype bf16 --do " + (c.dir / "q.npy").string()) == 2);  // backward set incomplete
  // float64 files are read too.
  fl::common::write_npy(c.dir / "q.npy", {2, 4, 48, 16}, c.inputs.q, fl::common::NpyDtype::float64);
  CHECK(run(base) == 0);
}

TEST_CASE("fa-check --report writes Markdown, CSV and SVG, and skips only the plots without gnuplot",
          "[numerics][fa-check]") {
  Case c("report", false);
  std::filesystem::path const with = c.dir / "with", without = c.dir / "without";
  CHECK(run(c.args + " --dtype bf16 --causal --report " + with.string()) == 0);
  CHECK(std::filesystem::exists(with / "report.md"));
  CHECK(std::filesystem::exists(with / "rows.csv"));
  std::string const md = slurp(with / "report.md");
  CHECK(md.find("bottom-right") != std::string::npos);
  if (std::system("gnuplot --version > /dev/null 2>&1") == 0) {
    CHECK(slurp(with / "error_histogram.svg").find("<svg") != std::string::npos);
    CHECK(std::filesystem::exists(with / "per_row_error.svg"));
    CHECK(std::filesystem::exists(with / "error_vs_length.svg"));
  }
  CHECK(run(c.args + " --dtype bf16 --causal --gnuplot /nonexistent/gnuplot --report " + without.string()) ==
        0);
  CHECK(slurp(without / "report.md").find("Plots skipped") != std::string::npos);
  CHECK(std::filesystem::exists(without / "metrics.csv"));
  CHECK_FALSE(std::filesystem::exists(without / "error_histogram.svg"));
  for (auto const& e : std::filesystem::directory_iterator(with))
    CHECK(e.path().string().find(".tmp") == std::string::npos);  // nothing half-written left behind
}

TEST_CASE("fa-check refuses hostile counts, stray words and unusable outputs before the work, in one line",
          "[numerics][fa-check]") {
  Case c("hostile", false);
  std::string const base = fa_check_binary().string() + c.args + " --dtype bf16 --causal";
  auto refused = [&](std::string const& extra, std::string const& named) {
    auto const outcome = fl::test::run_tool(base + " " + extra);
    INFO(extra << " -> " << outcome.exit_code << ": " << outcome.err);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.error_lines() == 1);
    CHECK_THAT(outcome.err, Catch::Contains(named));
  };
  refused("--threads 40000", "--threads 40000 is not allowed (0..1024");  // aborted: thread creation failed
  refused("--threads -1", "--threads -1");
  refused("--sample-rows -1", "--sample-rows -1");  // was 2^64 - 1 rows: GBs of memory
  refused("--sample-rows 4294967295", "--sample-rows 4294967295");
  refused("--sample-key-rows 18446744073709551615", "--sample-key-rows 18446744073709551615");
  refused("--sample-rows 12abc", "--sample-rows '12abc'");
  refused("stray", "unexpected argument 'stray'");  // was ignored, exit 0
  refused("--json " + c.dir.string(), "is a folder");
  refused("--json /nonexistent/x.json", "folder /nonexistent does not exist");
  std::ofstream(c.dir / "afile") << "x";
  refused("--report " + (c.dir / "afile" / "sub").string(), "afile is not a folder");
  // Root passes access(W_OK) under /proc, where no file can be created: refused before the work now.
  refused("--json /proc/x.json", "folder /proc does not take new files");
  // A newline inside a value was echoed raw: a two-line complaint.
  refused("--dtype \"$(printf 'bf\\n16')\"", "argument 'bf\\x0a16' holds a control byte");
  // A shape with a zero-sized batch, and the dimension ranges of common/input_limits.hpp.
  fl::common::write_npy(c.dir / "empty.npy", {0, 4, 48, 16}, {});
  std::string empty_q = c.args;
  empty_q.replace(empty_q.find("q.npy"), 5, "empty.npy");
  auto const empty = fl::test::run_tool(fa_check_binary().string() + empty_q + " --dtype bf16");
  CHECK(empty.exit_code == 2);
  CHECK_THAT(empty.err, Catch::Contains("batch 0 is not allowed (1..65536)"));
  // What exists is left alone: no temporary file beside an output that was refused.
  for (auto const& entry : std::filesystem::directory_iterator(c.dir))
    CHECK(entry.path().string().find(".tmp") == std::string::npos);
}

TEST_CASE("fa-check --json writes through a symlink and into a FIFO without replacing either",
          "[numerics][fa-check]") {
  Case c("links", false);
  std::string const base = fa_check_binary().string() + c.args + " --dtype bf16 --causal";
  std::filesystem::create_symlink(c.dir / "real.json", c.dir / "link.json");
  CHECK(fl::test::run_tool(base + " --json " + (c.dir / "link.json").string()).exit_code == 0);
  CHECK(std::filesystem::is_symlink(c.dir / "link.json"));
  CHECK_THAT(slurp(c.dir / "real.json"), Catch::Contains("\"verdict\""));
  REQUIRE(::mkfifo((c.dir / "fifo").c_str(), 0600) == 0);
  std::string const reader =
      "cat " + (c.dir / "fifo").string() + " > " + (c.dir / "from_fifo").string() + " &";
  REQUIRE(std::system(reader.c_str()) == 0);
  CHECK(fl::test::run_tool(base + " --json " + (c.dir / "fifo").string()).exit_code == 0);
  CHECK(std::filesystem::is_fifo(c.dir / "fifo"));  // was replaced by a regular file
}

TEST_CASE("fa-check: counts beyond int name their range, --causal-align needs --causal, a value is not empty",
          "[numerics][fa-check]") {
  Case c("counts", false);
  // Each was "the argument ('99999999999') for option '--threads' is invalid" without the range, or exit 0
  // with the option ignored (--causal-align without --causal, --json '').
  for (auto const& [args, named] : std::vector<std::pair<std::string, std::string>>{
           {"--causal --threads 99999999999", "--threads 99999999999 is not allowed (0..1024"},
           {"--causal --threads 2x", "--threads '2x' is not allowed (a whole number, 0..1024"},
           {"--causal --block-n 99999999999", "--block-n 99999999999 is not allowed (1..1024; a tile size)"},
           {"--causal --block-n 48,x", "--block-n 'x' is not allowed (a whole number, 1..1024; a tile size)"},
           {"--causal --warps-n 9", "--warps-n 9 is not allowed (1..8; warp columns)"},
           {"--causal --scale 1x", "--scale '1x' is not allowed (a positive finite number)"},
           {"--causal --scale inf", "--scale 'inf' is not allowed (a positive finite number)"},
           {"--causal-align top-left", "--causal-align top-left aligns the causal mask; give --causal too"},
           {"--causal --json ''", "--json '' is empty"}}) {
    auto const r = fl::test::run_tool(fa_check_binary().string() + c.args + " --dtype bf16 " + args);
    INFO(args << " -> " << r.exit_code << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.error_lines() == 1);
    CHECK_THAT(r.err, Catch::StartsWith("fa-check: ") && Catch::Contains(named));
    CHECK(r.out.empty());
  }
  // Both spellings of a list and the ends of the ranges are taken.
  CHECK(run(c.args + " --dtype bf16 --causal --block-n 48 1024 --warps-n 1,8 --threads 1") == 0);
}
