#pragma once
// fa-tune --gpus LIST|all: checks the GPUs (present, one model, the --arch), records the coordinator's run,
// starts one worker per GPU (tune/gpu_workers.hpp), then prints and writes the table read back from the
// database. With --replay the workers replay the recording and the ordinals are labels, so the whole path
// runs without a GPU. Returns fa-tune's exit code: 0; 1 when a worker failed (its finished rows are kept);
// 2 bad --gpus; 3 no GPU; 130/143 stopped.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "runtime/target_arch.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/tune/tune_command.hpp"

namespace fl::tuner {

// user_args: the command line as typed, without the program; write_outputs prints the table and writes
// --json, --report and the exports, as a one-process run does.
int tune_on_gpus(TuneOptions const& options, std::vector<std::string> user_args, runtime::TargetArch arch,
                 std::filesystem::path const& kernels_dir, std::filesystem::path const& db_path,
                 std::function<void(TuningReport const&, std::string const&)> const& write_outputs);

}  // namespace fl::tuner
