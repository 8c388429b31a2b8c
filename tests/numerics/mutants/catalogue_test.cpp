#include "numerics/mutants/catalogue.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace mut = fl::numerics::mutants;

namespace {

// Every emulator source, concatenated: the switches must appear there as `// FA_MUTANT_<ID>` markers.
std::string emulator_sources() {
  std::string all;
  for (auto const& entry :
       std::filesystem::directory_iterator(std::string(FA_SOURCE_DIR) + "/numerics/emulator")) {
    auto const ext = entry.path().extension();
    if (ext != ".cpp" && ext != ".hpp") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    all += text.str();
  }
  return all;
}

std::size_t occurrences(std::string const& text, std::string const& word) {
  std::size_t count = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    char const next = at + word.size() < text.size() ? text[at + word.size()] : ' ';
    if (next != '_' && !std::isalnum(static_cast<unsigned char>(next))) ++count;  // not a longer switch name
  }
  return count;
}

}  // namespace

TEST_CASE("the catalogue holds the mutants the issue asks for, with switch names by the rule", "[mutants]") {
  for (char const* id :
       {"unrescaled-o", "unrescaled-l", "m-init-zero", "normalize-in-loop", "stale-max", "missing-scale",
        "exp-base-mismatch", "causal-diagonal", "masked-row-nan", "tail-unmasked", "lse-without-max",
        "bwd-missing-delta", "bwd-dk-missing-scale", "bwd-dq-overwrite", "bwd-p-without-l", "bwd-race",
        "fp8-missing-descale", "fp8-p-overflow"}) {
    INFO(id);
    auto const found = mut::find_mutant(id);
    REQUIRE(found);
    CHECK(mut::info(*found).name == id);
    CHECK(mut::find_mutant(mut::info(*found).switch_name) == found);
  }
  CHECK(mut::info(mut::MutantId::unrescaled_o).switch_name == "FA_MUTANT_UNRESCALED_O");
  CHECK(mut::info(mut::MutantId::bwd_dk_missing_scale).switch_name == "FA_MUTANT_BWD_DK_MISSING_SCALE");
  CHECK_FALSE(mut::find_mutant("no-such-bug"));
  std::set<std::string_view> names;
  for (auto const& m : mut::kCatalogue) {
    names.insert(m.name);
    CHECK_FALSE(m.description.empty());
    CHECK(m.description.find('\n') == std::string_view::npos);
    CHECK(mut::cpu_applicable(m.id) == (m.kind != mut::MutantKind::gpu_only));
  }
  CHECK(names.size() == mut::kCatalogue.size());
}

TEST_CASE("each CPU mutant's switch is marked in the emulator and the GPU-only one is not", "[mutants]") {
  std::string const sources = emulator_sources();
  for (auto const& m : mut::kCatalogue) {
    std::string const marker(m.switch_name);
    INFO(marker);
    std::size_t const n = occurrences(sources, marker);
    if (mut::cpu_applicable(m.id)) {
      // One place per loop order at most (FA-1 and FA-2 each have their own online-softmax step).
      CHECK(n >= 1);
      CHECK(n <= 2);
    } else {
      CHECK(n == 0);
    }
  }
}

TEST_CASE("MutantSet switches exactly the mutants it holds", "[mutants]") {
  auto const set = mut::MutantSet::only(mut::MutantId::stale_max);
  for (auto const& m : mut::kCatalogue) CHECK(set.on(m.id) == (m.id == mut::MutantId::stale_max));
  CHECK(mut::MutantSet::none().empty());
  CHECK_FALSE(set.empty());
}
