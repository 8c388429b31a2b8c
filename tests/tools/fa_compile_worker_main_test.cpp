// fa-compile-worker's surface is the request on stdin (runtime/compile_worker.hpp; the protocol itself is
// tested in tests/runtime and tests/tuner/compile): run by hand with words it says it takes none (exit 2,
// one line), and a request that is not one is answered, not crashed on.
#include <catch2/catch.hpp>

#include <string>

#include "tests/tool_process.hpp"

TEST_CASE("fa-compile-worker: arguments are refused in one line, exit code 2", "[tools][cli]") {
  for (char const* args : {"--help", "request.bin"}) {
    INFO(args);
    auto const r = fl::test::run_tool(fl::test::sibling_binary("fa-compile-worker").string() + " " + args +
                                      " < /dev/null");
    CHECK(r.exit_code == 2);
    CHECK(r.error_lines() == 1);
    CHECK(r.err.find("takes no arguments") != std::string::npos);
  }
}

TEST_CASE("fa-compile-worker: a truncated or foreign request is answered as a failure", "[tools][cli]") {
  for (char const* input : {"/dev/null", "/proc/self/cmdline"}) {
    INFO(input);
    auto const r = fl::test::run_tool(fl::test::sibling_binary("fa-compile-worker").string() + " < " + input);
    CHECK(r.exit_code == 0);  // the answer (on stdout) carries the failure; the parent reads it
    CHECK((r.out.find("bad request") != std::string::npos ||
           r.out.find("message format") != std::string::npos));
  }
}
