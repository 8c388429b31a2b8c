// Catch2 entry point shared by every test binary.
//
// Tests that need a GPU carry the tag [gpu]. Where there is no CUDA driver or device they must be
// reported as skipped, never as passed: CTest runs each test case in its own process, so when every
// selected test is [gpu] and no GPU is present this main prints why and exits with 77, which CTest
// (SKIP_RETURN_CODE) reports as "Skipped". Run by hand with no filter, the binary runs everything
// but the [gpu] tests and says how many it left out.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>

#include "tests/support/gpu_probe.hpp"

namespace {

constexpr int kSkipExitCode = 77;  // CTest's SKIP_RETURN_CODE, set in tests/CMakeLists.txt

bool is_gpu_test(Catch::TestCase const& test) {
  return std::find(test.tags.begin(), test.tags.end(), "gpu") != test.tags.end();
}

}  // namespace

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  if (session.config().listTestNamesOnly() || session.configData().showHelp) return session.run();

  auto const reason = fl::test::gpu_unavailable_reason();
  if (!reason) return session.run();

  auto const& all = Catch::getAllTestCasesSorted(session.config());
  auto const selected = session.config().hasTestFilters()
                            ? Catch::filterTests(all, session.config().testSpec(), session.config())
                            : all;
  auto const gpu_count = std::count_if(selected.begin(), selected.end(), is_gpu_test);
  if (gpu_count == 0) return session.run();
  if (static_cast<std::size_t>(gpu_count) == selected.size()) {
    std::printf("skipped: %s\n", reason->c_str());
    return kSkipExitCode;
  }
  if (!session.config().hasTestFilters()) {
    std::printf("note: %ld [gpu] test(s) not run: %s\n", static_cast<long>(gpu_count), reason->c_str());
    session.configData().testsOrTags.push_back("~[gpu]");
    session.useConfigData(session.configData());
  }
  return session.run();
}
