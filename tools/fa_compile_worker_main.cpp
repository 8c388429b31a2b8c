// fa-compile-worker: one NVRTC compile in its own process (runtime/compile_worker.hpp). Reads the request
// on stdin, writes the result on stdout; started by fa-tune and fa-bench, not by users.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

#include "runtime/compile_worker.hpp"

int main() {
  // Ends with its parent: an orphaned compile would only keep a core busy.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  return fl::runtime::serve_compile_request(STDIN_FILENO, STDOUT_FILENO);
}
