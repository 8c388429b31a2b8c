#include "tools/fa_mutate_options.hpp"

#include <cstdio>
#include <ctime>
#include <sstream>

#include "numerics/input_families.hpp"
#ifdef FL_FA_MUTATE_WITH_GPU
#include "tools/fa_mutate/racecheck.hpp"
#endif

namespace fl::tools::fa_mutate {

namespace po = boost::program_options;
namespace mut = numerics::mutants;
namespace emu = numerics::emulator;
using common::Precision;

namespace {

#ifdef FL_FA_MUTATE_WITH_GPU
constexpr int kDefaultRacecheckSeconds = int(kDefaultRacecheckLimit.count());
#else
constexpr int kDefaultRacecheckSeconds = 0;  // no GPU target, nothing to racecheck
#endif

}  // namespace

po::options_description fa_mutate_options() {
  po::options_description opts(
      "fa-mutate: build known-wrong FlashAttention variants and prove each is caught and named");
  // clang-format off
  opts.add_options()
    ("help,h", "this help")
    ("list", "print the mutant catalogue (id, switch, kind, description) and exit")
    ("target", po::value<std::string>()->default_value("cpu"), "cpu (the tiled emulator) or gpu (kernels_src via NVRTC)")
    ("family", po::value<std::vector<std::string>>()->multitoken(), "kernel families, comma-separated; cpu: fa1 (outer loop over K/V blocks), fa2 (outer loop over query tiles); default both; gpu: any registered kernels_src family carrying FA_MUTANT_ switches (fa2_sm80, the default; fa1; an FP8 family with --dtype fp8_e4m3); backward mutants run <family>_bwd where it is registered")
    ("dtype", po::value<std::vector<std::string>>()->multitoken(), "claimed precisions, comma-separated: fp32, fp16, bf16, fp8_e4m3, fp8_e5m2; default cpu bf16,fp8_e4m3 (fp8 mutants need an fp8 dtype), gpu bf16,fp16; on the gpu each family runs those it supports (the others are listed as skipped)")
    ("mutant", po::value<std::vector<std::string>>()->multitoken(), "restrict to these catalogue ids (default: all)")
    ("inputs", po::value<std::vector<std::string>>()->multitoken(), "restrict to these input families (default: all)")
    ("block-m", po::value<std::string>()->default_value("64"), "kBlockM of the mutants under test (1..1024)")
    ("block-n", po::value<std::string>()->default_value("32"), "kBlockN of the mutants under test (1..1024); also added to the diagnosis' candidates")
    ("seqlen", po::value<std::string>()->default_value("100"), "N_q = N_k of the base shape, 1..2^24 (families adjust it: masked rows, ragged tail)")
    ("head-dim", po::value<std::string>()->default_value("64"), "head dimension d (1..1024)")
    ("heads-q", po::value<std::string>()->default_value("2"), "query heads (1..65536)")
    ("heads-kv", po::value<std::string>()->default_value("1"), "key/value heads (GQA when fewer than query heads)")
    ("seed", po::value<std::string>()->default_value("1"), "seed of the input families")
    ("race-seqlen", po::value<std::string>()->default_value("1024"), "gpu: races (bwd-race) are first rerun bit for bit on a normal problem of this N_q = N_k (0: only the campaign's inputs)")
    ("compute-sanitizer", po::value<std::string>(), "gpu: compute-sanitizer that racechecks a race mutant (bwd-race) whose reruns all agreed, once on a b1 h2 n300 problem in a child process (default: compute-sanitizer on PATH, else $CUDA_HOME/bin, /usr/local/cuda/bin; none: reruns only; not found: the survivor says so)")
    ("racecheck-timeout", po::value<std::string>()->default_value(std::to_string(kDefaultRacecheckSeconds)), "gpu: seconds one racecheck child may run before it is killed (1..3600)")
    ("threads", po::value<std::string>()->default_value("0"), "threads (0: all cores; at most 1024)")
    ("kernels-dir", po::value<std::string>(), "gpu: kernels_src to compile (default: FA_KERNELS_DIR, next to the binary, the source tree)")
    ("compile-db", po::value<std::string>(), "gpu: SQLite compile cache for the mutants' NVRTC programs (default: none, every program compiled)")
    ("json", po::value<std::string>(), "write the JSON report to this path")
    ("dump-dir", po::value<std::string>(), "write every killing input and every false positive here as .npy files (q, k, v as consumed, do, o, lse, dq, dk, dv) with case.json (shape, causal, scale, dtype, kernel config) and fa-check.sh, the fa-check command that replays the check and the diagnosis; DIR/<target>-<family>/<dtype>/<mutant or correct-<input>>/")
    ("db", po::value<std::string>(), "store the runs in this SQLite database");
  // clang-format on
  return opts;
}

po::options_description fa_mutate_hidden_options() {
  // The child side of the racecheck (tools/fa_mutate/racecheck_probe.hpp): fa-mutate runs itself under
  // compute-sanitizer with these; not for users, so not in --help.
  po::options_description hidden;
  // clang-format off
  hidden.add_options()
    ("racecheck-probe", po::value<std::string>(), "run this mutant once on the racecheck problem and exit")
    ("racecheck-control", "with --racecheck-probe: the correct kernel of the mutant's direction instead");
  // clang-format on
  return hidden;
}

namespace {
// A list naming an item twice ran its rows twice (--dtype bf16,bf16): refused.
void refuse_repeats(std::vector<std::string> const& items, char const* option) {
  for (std::size_t i = 0; i < items.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (items[i] == items[j])
        throw BadInput(std::string(option) + " " + items[i] + " is named twice (each once)");
}
}  // namespace

std::vector<std::string> split_list(std::vector<std::string> const& raw) {
  std::vector<std::string> out;
  for (auto const& item : raw) {
    std::stringstream in(item);
    std::string part;
    while (std::getline(in, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::vector<Precision> parse_dtypes(std::vector<std::string> const& raw) {
  std::vector<Precision> out;
  refuse_repeats(split_list(raw), "--dtype");
  for (auto const& text : split_list(raw)) {
    auto p = fl::common::parse_precision(text);
    if (!p) throw BadInput("--dtype " + text + ": allowed fp32, fp16, bf16, fp8_e4m3, fp8_e5m2");
    out.push_back(*p);
  }
  return out;
}

std::vector<emu::LoopOrder> parse_cpu_families(std::vector<std::string> const& raw) {
  std::vector<emu::LoopOrder> out;
  refuse_repeats(split_list(raw), "--family");
  for (auto const& text : split_list(raw)) {
    if (text == "fa1")
      out.push_back(emu::LoopOrder::fa1);
    else if (text == "fa2")
      out.push_back(emu::LoopOrder::fa2);
    else
      throw BadInput("--family " + text + ": allowed for --target cpu: fa1, fa2");
  }
  return out;
}

std::vector<mut::MutantId> parse_mutants(std::vector<std::string> const& raw) {
  std::vector<mut::MutantId> out;
  refuse_repeats(split_list(raw), "--mutant");
  for (auto const& text : split_list(raw)) {
    auto id = mut::find_mutant(text);
    if (!id) throw BadInput("--mutant " + text + ": not in the catalogue (fa-mutate --list shows it)");
    out.push_back(*id);
  }
  return out;
}

std::vector<fl::numerics::InputFamily> parse_inputs(std::vector<std::string> const& raw) {
  std::vector<fl::numerics::InputFamily> out;
  refuse_repeats(split_list(raw), "--inputs");
  for (auto const& text : split_list(raw)) {
    auto f = fl::numerics::parse_input_family(text);
    if (!f) throw BadInput("--inputs " + text + ": not an input family (see numerics/input_families.hpp)");
    out.push_back(*f);
  }
  return out;
}

std::string today() {
  std::time_t const now = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

void list_catalogue() {
  for (auto const& m : mut::kCatalogue)
    std::printf("%-22s %-32s %-9s %s\n", std::string(m.name).c_str(), std::string(m.switch_name).c_str(),
                std::string(mut::kind_name(m.kind)).c_str(), std::string(m.description).c_str());
}

}  // namespace fl::tools::fa_mutate
