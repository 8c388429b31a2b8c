#include "tools/fa_mutate/mutant_sources.hpp"

#include <catch2/catch.hpp>

#include "device/families/registry.hpp"

using namespace fl::device;
using namespace fl::tools::fa_mutate;

TEST_CASE("source_has_switch counts only whole names on preprocessor lines", "[tuner][mutants]") {
  CHECK(source_has_switch("x\n#ifdef FA_MUTANT_STALE_MAX\ny", "FA_MUTANT_STALE_MAX"));
  CHECK(source_has_switch("  #ifndef FA_MUTANT_UNRESCALED_O  // [unrescaled-o]", "FA_MUTANT_UNRESCALED_O"));
  CHECK(source_has_switch("#if defined(FA_MUTANT_BWD_RACE)", "FA_MUTANT_BWD_RACE"));
  CHECK_FALSE(source_has_switch("// FA_MUTANT_STALE_MAX lives here\nint x;", "FA_MUTANT_STALE_MAX"));
  CHECK_FALSE(source_has_switch("#ifdef FA_MUTANT_STALE_MAX_2", "FA_MUTANT_STALE_MAX"));
  CHECK_FALSE(source_has_switch("#endif  // FA_MUTANT_STALE_MAX", "FA_MUTANT_STALE_MAX"));
}

TEST_CASE("a family's sources are its main file and the headers it includes, named for reasons",
          "[tuner][mutants]") {
  auto const source =
      load_family_source(find_family("fa2_sm80"), Direction::forward, FA_SOURCE_DIR "/kernels_src");
  REQUIRE(source);
  CHECK(source->family->name() == "fa2_sm80");
  CHECK(source->files.find("fa2_sm80_fwd.cu and the ") != std::string::npos);
  CHECK(source_has_switch(source->text, "FA_MUTANT_STALE_MAX"));
  auto const backward =
      load_family_source(find_family("fa2_sm80_bwd"), Direction::backward, FA_SOURCE_DIR "/kernels_src");
  REQUIRE(backward);
  CHECK(backward->files.find("fa2_sm80_bwd.cu") != std::string::npos);
}
