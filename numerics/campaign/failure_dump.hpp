#pragma once
// fa-mutate --dump-dir: each failure of a campaign (the input that killed a mutant, or one the correct
// variant failed) written as .npy files with a case.json, so that the check and the diagnosis can be
// replayed offline with fa-check, away from the machine that produced the outputs (a GPU).
//
// Layout: DIR/<target>-<family>/<dtype>/<mutant id>/ for a kill, .../correct-<input
// family>-<causal|noncausal>/ for a false positive. In each: q, k, v (as the implementation consumed them:
// rounded to the dtype), do, o, lse (for a backward mutant: the forward the backward read), dq, dk, dv when
// computed; case.json (shape, causal, scale, dtype, input case, verdict, the runner's kernel config, the
// fa-check command line) and fa-check.sh (that command line, run from the folder). float32 .npy: fp16/bf16
// values are exact in it. The campaign's problems are small (n ~ 100-260, d 64), so a case is ~0.3 MB and a
// whole campaign a few MB.
#include <filesystem>
#include <string>
#include <vector>

#include "numerics/campaign/mutation_campaign.hpp"

namespace fl::numerics::mutants {

struct DumpContext {
  std::string target;              // "gpu"
  std::string family;              // "fa2_sm80"
  std::vector<int> extra_block_n;  // fa-check --block-n, as the campaign's diagnosis used them
};

// The folder of one record under `dir`.
std::filesystem::path failure_folder(std::filesystem::path const& dir, DumpContext const& context,
                                     FailureRecord const& record);

// The fa-check command line that reproduces the check and the diagnosis from the files of `record`, with
// paths relative to its folder and `fa_check` as the program.
std::string fa_check_command(FailureRecord const& record, DumpContext const& context,
                             std::string const& fa_check = "fa-check");

// Writes the record's files (each atomically); returns its folder. Throws std::runtime_error when a file
// cannot be written.
std::filesystem::path write_failure(std::filesystem::path const& dir, DumpContext const& context,
                                    FailureRecord const& record);

// A FailureSink writing every record under `dir`.
FailureSink failure_dump_sink(std::filesystem::path dir, DumpContext context);

}  // namespace fl::numerics::mutants
