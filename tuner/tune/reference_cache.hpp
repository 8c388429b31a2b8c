#pragma once
// The verification inputs of a tuning run and their float64 reference, computed once per
// (problem shape, input family, seed, dtype, direction, sample size) and shared by every candidate (and by
// the default config and every noise run). Before this cache each candidate regenerated its inputs and
// recomputed the reference on the CPU (experiments/tuner/README.md, "Notes", has the measured cost before and
// after).
#include <atomic>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/run/fp8_operands.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "numerics/input_families.hpp"
#include "tuner/tune/forward_store.hpp"
#include "tuner/tune/prepared_check.hpp"

namespace fl::tuner {

struct VerificationSet {
  PreparedCheck check;  // inputs, sample, reference, bounds
  device::HostOutputs
      forward;  // backward problems: the reference's O (rounded to the dtype) and LSE; else empty
  // FP8 problems: the operands as the kernel reads them (numerics::gpu::fp8_operands_for), quantised once
  // with the set, not twice per candidate (verification, timing): 3.5 s of one core of this machine at b4
  // h32 n4096 d64. Null for a 16-bit problem, where numerics refused them (fp8_refused says why), or
  // without encode_once.
  std::shared_ptr<device::Fp8Operands const> fp8 = nullptr;
  std::string fp8_refused = {};
};

// Large sets (the timed problem's inputs, their float64 copy, encodings and the judge's outputs: ~1.6 GB at
// a headline forward shape, ~3 GB at a backward one) are kept while they fit a share of the machine's
// memory. fa-tune measures every problem's default before any problem's search (tune_command.cpp), so each
// set is wanted twice per run, in the same order: on the H200 (2026-12-04) rebuilding it took 181 s of a
// 348 s grid line (30 FP8 forwards, 4-5 s per build on 16 cores). When the sets do not all fit, the first
// ones are kept and the newest are dropped (the set in use last, never the one inserted now): the second
// pass then finds the first sets, where dropping the oldest would leave it none. A backward's forward, its
// one O(B H N^2 D) step, is kept apart besides (kKeptForwardBytes).
class ReferenceCache {
 public:
  // encode_once: each set also keeps its inputs' 16-bit encodings (device::HostInputs::encoded), or an FP8
  // set its quantised operands, so a candidate's uploads do not convert again (false: the 2026-11-29
  // protocol, for before/after runs: --pace baseline).
  // store: where a backward timed problem's forward and row statistics are kept between processes
  // (tune/forward_store.hpp); none: computed in every process.
  // large_set_bytes: the memory large sets may hold together (default: kLargeSetMemoryShare of this
  // machine's).
  explicit ReferenceCache(bool encode_once = true, std::optional<ForwardStore> store = std::nullopt,
                          std::optional<std::size_t> large_set_bytes = std::nullopt);
  ~ReferenceCache();  // cancels the forwards computed ahead and waits for their threads (a block of rows)
  ReferenceCache(ReferenceCache const&) = delete;
  ReferenceCache& operator=(ReferenceCache const&) = delete;

  static constexpr std::size_t kLargeSetBytes = std::size_t(64) << 20;  // smaller sets are always kept
  // 0.4: a grid line's 30 headline forward sets (~50 GB) fit the H200 machine's 128 GiB with the kept
  // forwards (kKeptForwardBytes), the one being built and the forward computed ahead beside them; a 32 GiB
  // workstation keeps 7.
  static constexpr double kLargeSetMemoryShare = 0.4;
  // Bytes a set holds (estimated from its vectors: inputs in float and float64, encodings or FP8 codes,
  // the backward's forward, the judge's float64 outputs).
  static std::size_t bytes_of(VerificationSet const& set);
  // A backward set's forward and row statistics (~140 MiB at the headline shapes) outlive its set: fa-tune
  // measures every problem's default before any problem's search (tune_command.cpp), so each large set is
  // built twice per run, and without these the O(B H N^2 D) forward twice too. 30 headline problems (a grid
  // line) hold ~4.2 GiB.
  static constexpr std::size_t kKeptForwardBytes = std::size_t(8) << 30;

  // Inputs from numerics' input family (the small awkward verification problem).
  VerificationSet const& family_set(device::Problem const& problem, numerics::InputFamily family,
                                    std::uint64_t seed, std::size_t sample_rows);
  // numerics::gpu::make_normal_inputs(problem, seed) (the timed problem: the same values are timed).
  VerificationSet const& normal_set(device::Problem const& problem, std::uint64_t seed,
                                    std::size_t sample_rows);

  // Starts the float64 forward of a backward problem's timed inputs (make_normal_inputs(problem, seed)) on
  // a thread of its own at the lowest CPU priority, with one core left free for the thread that launches
  // the timed runs: fa-tune calls it for the next problem before searching this one, whose CPU is mostly
  // idle while the GPU times (a backward forward took 7-41 s on the H200, this problem's search 10-25 s).
  // normal_set takes it when it gets to that problem. Up to kAheadForwards wait to be taken, computed one
  // after the other in the order asked; asking for one more drops the oldest (its problem was passed
  // without a verification): kept in memory if it has ended, else cancelled. A call for a forward problem,
  // or for a forward already asked for, kept or on disk, does nothing.
  // 2: fa-tune asks for the next problem's forward before this problem's first verification takes its own.
  static constexpr std::size_t kAheadForwards = 2;
  void forward_ahead(device::Problem const& problem, std::uint64_t seed);

  // Starts building a forward problem's normal_set (its inputs, their encodings or FP8 operands, the
  // sampled float64 reference) on a thread of its own at the lowest CPU priority: fa-tune asks for the next
  // problem's while this one runs, whose CPU is mostly idle while the GPU times. A grid line's first pass
  // built each in place, 2.0-6.2 s a forward problem on the H200 (2026-12-04, the footers' "building its
  // sets") while the GPU waited. normal_set takes it. Up to kAheadSets wait to be taken, built one after
  // the other in the order asked (each takes every core it can get); asking for one more drops the oldest
  // if it is built (its problem was passed without a verification), else the request. Backward problems:
  // forward_ahead.
  // 2: fa-tune asks for the next problem's set before this problem's first verification takes its own.
  static constexpr std::size_t kAheadSets = 2;
  void normal_set_ahead(device::Problem const& problem, std::uint64_t seed, std::size_t sample_rows);

  std::size_t size() const { return sets_.size(); }
  std::size_t large_sets_dropped() const { return large_dropped_; }  // over the memory share
  double seconds_spent() const { return seconds_; }  // building inputs and references, all sets
  std::size_t forwards_loaded() const { return forwards_loaded_; }  // from the store, and checked
  std::size_t forwards_kept() const { return forwards_kept_; }      // reused from this process
  std::size_t forwards_ahead() const { return forwards_ahead_; }    // computed ahead, and taken
  std::size_t sets_ahead() const { return sets_ahead_; }            // normal_set_ahead's, taken

 private:
  // stored: the inputs are make_normal_inputs(problem, seed), whose backward forward the store may hold.
  VerificationSet const& insert(std::string key, device::Problem const& problem, device::HostInputs inputs,
                                std::uint64_t seed, std::size_t sample_rows, bool stored);
  std::unique_ptr<VerificationSet> build(std::string const& key, device::Problem const& problem,
                                         device::HostInputs inputs, std::uint64_t seed,
                                         std::size_t sample_rows, bool stored);
  void keep(std::string const& key, numerics::gpu::ForwardWithStatistics const& forward);
  // Keeps `set` under `key`, within the large sets' memory (see the class comment).
  VerificationSet const& emplace(std::string key, std::unique_ptr<VerificationSet> set);
  std::map<std::string, std::unique_ptr<VerificationSet>> sets_;
  struct LargeSet {
    std::string key;
    std::size_t bytes;
  };
  std::vector<LargeSet> large_;  // oldest first
  std::size_t large_budget_;
  std::size_t large_dropped_ = 0;
  double seconds_ = 0.0;
  bool encode_once_;
  std::optional<ForwardStore> store_;
  std::size_t forwards_loaded_ = 0;
  // Backward sets' forwards and row statistics, kept when their set is dropped (up to kKeptForwardBytes).
  std::map<std::string, numerics::gpu::ForwardWithStatistics> forwards_;
  std::size_t forward_bytes_ = 0;
  std::size_t forwards_kept_ = 0;
  // The forwards computed ahead (forward_ahead), under their forward keys (the set key less the sample).
  struct Ahead {
    std::string forward_key;
    std::shared_ptr<std::atomic<bool>> cancel;
    std::future<numerics::gpu::ForwardWithStatistics> result;
    std::shared_future<void> ended;  // set when its thread ends, whatever the outcome
  };
  std::deque<Ahead> ahead_;  // oldest first; each starts when the one before it has ended
  std::size_t forwards_ahead_ = 0;
  struct SetAhead {  // normal_set_ahead's
    std::string key;
    std::future<std::unique_ptr<VerificationSet>> result;
    std::shared_future<void> ended;  // set when its thread ends, whatever the outcome
  };
  std::deque<SetAhead> set_ahead_;  // oldest first; each starts when the one before it has ended
  std::size_t sets_ahead_ = 0;
  // The forward computed ahead for `forward_key`, if one was asked for (waits for it); else none.
  std::optional<numerics::gpu::ForwardWithStatistics> take_ahead(std::string const& forward_key);
};

}  // namespace fl::tuner
