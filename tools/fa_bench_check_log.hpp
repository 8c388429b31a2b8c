#pragma once
// fa-bench's log of passed checks, so that a shape checked once is not checked again by the same binary on
// the same GPU: the experiments time the same (family, config, shape) in several questions of one device
// call (speed_vs_n, recomputation and io_traffic share the headline d 128 shapes), and each check costs
// seconds of host reference on a GPU that waits. Enabled by the environment: FA_BENCH_CHECK_LOG=FILE
// (experiments/lib.sh sets it for every run.sh). One line per passed check, "KEY<TAB>SUMMARY"; the key is
// the SHA-256 of everything the verdict depends on (check_key). A failed check is never recorded, so it
// runs again; a line cut short by a crash (no newline) is ignored.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace fl::tools::fa_bench {

inline constexpr char const* kCheckLogEnv = "FA_BENCH_CHECK_LOG";

class CheckLog {
 public:
  // The log at `path`, its passed checks read. Throws std::runtime_error naming the path when it cannot be
  // read or appended to.
  static CheckLog open(std::filesystem::path path);
  // The log kCheckLogEnv names, or nullopt when it is unset or empty.
  static std::optional<CheckLog> from_environment();

  // The summary recorded for `key`, or nullopt.
  std::optional<std::string> passed(std::string const& key) const;
  // Appends one line (a single write, so concurrent fa-bench runs do not interleave) and remembers it.
  void record(std::string const& key, std::string const& summary);

  std::filesystem::path const& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::map<std::string, std::string> passed_;
};

// SHA-256 (hex) of the running executable: the host code that generated inputs and judged them.
std::string executable_sha256();

// The key of one check: the executable's hash, the compiled kernels' (the CUBIN: config, mutants,
// kernels_src, arch and NVRTC all in it), the GPU, and `what` (family, config, problem, rows, seeds).
std::string check_key(std::string_view executable_sha256, std::string_view cubin_sha256,
                      std::string_view device_identity, std::string_view what);

}  // namespace fl::tools::fa_bench
