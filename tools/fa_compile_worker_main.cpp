// fa-compile-worker: one NVRTC compile in its own process (runtime/compile_worker.hpp). Reads the request
// on stdin, writes the result on stdout; started by fa-tune and fa-bench, not by users.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "common/exit_codes.hpp"
#include "runtime/compile_worker.hpp"

int main(int argc, char**) {
  // Its whole interface is the request on stdin: a word on its command line is someone running it by hand.
  if (argc > 1) {
    std::fputs(
        "fa-compile-worker: takes no arguments (fa-tune and fa-bench start it and send the request on "
        "stdin)\n",
        stderr);
    return fl::common::kExitBadInput;
  }
  // Ends with its parent: an orphaned compile would only keep a core busy.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  return fl::runtime::serve_compile_request(STDIN_FILENO, STDOUT_FILENO);
}
