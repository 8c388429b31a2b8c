#pragma once
// One command run as a child process within a time limit, its stdout and stderr captured together: for
// tools whose own crash or hang must cost the caller one answer, never the run (compute-sanitizer's
// racecheck of a mutant, tools/fa_mutate/racecheck.hpp). The child runs in its own process group (the
// terminal's Ctrl-C reaches fa-mutate, not the child; a timeout kills the whole group, so a sanitizer's
// target dies with it), with stdin from /dev/null and its output in an unlinked temporary file (no pipe a
// chatty child could fill and block on).
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace fl::tools::fa_mutate {

struct TimedChild {
  std::string start_error;       // non-empty: the command could not be started (the reason)
  bool timed_out = false;        // killed (with its process group) at the time limit
  std::optional<int> exit_code;  // it exited by itself
  std::optional<int> signal;     // a signal ended it (not the time limit's)
  std::string output;            // stdout and stderr, interleaved as written
  // "exit 0", "ended by signal 11 (SIGSEGV)", "killed after the time limit of 2 s", "not started: ..."
  std::string how_it_ended() const;
};

// argv[0] is looked up on PATH when it has no '/'. Returns when the child has exited or, at `limit`,
// has been killed with SIGKILL and reaped; never throws for the child's behaviour.
TimedChild run_timed_child(std::vector<std::string> const& argv, std::chrono::milliseconds limit);

}  // namespace fl::tools::fa_mutate
