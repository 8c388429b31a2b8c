#pragma once
// fa-tune after a CUDA fault its process cannot clear. A sticky error (CUDA_ERROR_ILLEGAL_ADDRESS, ...)
// leaves the context unusable; resetting the primary context in-process did not bring the H200 back
// (2026-12-02, experiments/tuner/README.md: every later call failed the same), so fa-tune starts itself
// again: the culprit is already stored as failed (every result is committed at once), and the new process,
// same pid (execv), same arguments, gets a fresh context and resumes from the database after it. Under
// --gpus each worker does the same, unseen by the coordinator. The count and the first start travel in the
// environment, so that the restarts are bounded and --time-limit covers the whole chain.
#include <string>

namespace fl::tuner {

// More sticky faults than this in one run say that the family is broken, not a config; each restart costs
// a process start, a CUDA context and the problem's reference (~5 s on the H200).
constexpr int kMaxFaultRestarts = 32;

// run()'s answer when main should restart the process (never an exit code: those are 0..255).
constexpr int kRestartForFreshContext = -1;

// Restarts done so far in this chain of processes (0 in the first).
int fault_restarts_so_far();
bool fault_restart_left();

// Seconds since the chain's first process started (0 in that process); the first call in the first process
// records its start.
double seconds_since_chain_start();

// execv(/proc/self/exe, argv) with the restart count raised, after a line on stderr naming the culprit.
// Returns only when the exec failed, after saying why.
void restart_for_fresh_context(char* const argv[], std::string const& culprit);

}  // namespace fl::tuner
