#pragma once
// Process exit codes shared by every FlashLab command (fa-tune, fa-check, fa-mutate), so that scripts can
// tell a wrong answer from a wrong command line from a machine without a GPU.
namespace fl::common {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;  // a numerical check failed (the tool worked, the kernel is wrong)
inline constexpr int kExitBadInput = 2;     // the user's mistake: one clear line naming the bad value
inline constexpr int kExitNoGpu = 3;        // the command needs a GPU: no CUDA driver, or no CUDA device

}  // namespace fl::common
