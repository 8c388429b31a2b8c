#pragma once
// Every count a user gives a FlashLab command, with the range it must lie in: one place, so that the
// commands agree and a bad value is always the same one line ("--threads 40000 is not allowed (0..1024)",
// exit code 2). The ranges are what the code can honour, not what is sensible: beyond them a thread
// cannot be started, an index no longer fits an int, or a buffer cannot be allocated.
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fl::common {

struct CountRange {
  std::string_view what;  // the option or quantity, as the user knows it: "--threads", "batch"
  std::int64_t min;
  std::int64_t max;
  std::string_view note = {};  // what a special value means, e.g. "0: one per core"
};

// Worker threads of fa-check and fa-mutate: a process gets a few thousand threads at most before
// std::thread throws; 1024 is far above any core count this project runs on.
inline constexpr CountRange kThreads{"--threads", 0, 1024, "0: all cores"};
// fa-tune's compile workers: each is a process-sized NVRTC job of about 1 GiB; 256 is more than any host.
inline constexpr CountRange kJobs{"--jobs", 0, 256, "0: one per core"};
// fa-check's sampled rows: beyond 2^24 rows a full check (--full) is the cheaper way to ask for them.
inline constexpr CountRange kSampleRows{"--sample-rows", 1, std::int64_t(1) << 24};
inline constexpr CountRange kSampleKeyRows{"--sample-key-rows", 1, std::int64_t(1) << 24};
// Seeds are stored as SQLite integers (signed 64-bit).
inline constexpr CountRange kSeed{"--seed", 0, INT64_MAX};
// The dimensions of an attention problem, from a command line or a .npy header. Indices are ints in the
// kernels and the reference, and b*h*n must fit one too: 2^16 batches or heads, 2^24 tokens, d <= 1024.
inline constexpr CountRange kBatch{"batch", 1, 65536};
inline constexpr CountRange kHeads{"heads", 1, 65536};
inline constexpr CountRange kSeqlen{"sequence length", 1, std::int64_t(1) << 24};
inline constexpr CountRange kHeadDim{"head dim", 1, 1024};
// fa-tune's batch = tokens / n: a batch of kBatch.max at n = 2^14 at most.
inline constexpr CountRange kTokens{"--tokens", 1, std::int64_t(1) << 30};

// fa-explain's family draw: N_q = N_k keys of d dims (1 s and 150 MB at 2^16; 2^27 aborted on bad_alloc
// and 2^24 ran for minutes). 2^16 keys are 64 blocks of the largest kBlockN, more than one row can teach.
inline constexpr CountRange kExplainKeys{"--keys", 1, 65536};

// `r` under the name the user typed ("--heads-q" for kHeads).
constexpr CountRange as_option(CountRange r, std::string_view option) {
  r.what = option;
  return r;
}

inline std::string range_text(CountRange const& r) {
  std::string text = std::to_string(r.min) + ".." + std::to_string(r.max);
  if (!r.note.empty()) text += "; " + std::string(r.note);
  return text;
}

// The one-line complaint about `value` ("--threads 40000 is not allowed (0..1024; 0: all cores)"), or
// nullopt when it is in range.
inline std::optional<std::string> out_of_range(CountRange const& r, std::int64_t value) {
  if (value >= r.min && value <= r.max) return std::nullopt;
  return std::string(r.what) + " " + std::to_string(value) + " is not allowed (" + range_text(r) + ")";
}

struct ParsedCount {
  std::int64_t value = 0;
  std::string error;  // empty when value is good
  bool ok() const { return error.empty(); }
};

// A whole decimal number in range. "-1", "1e3", "12abc", "" and numbers beyond 64 bits are refused with
// the text as typed (never wrapped: boost's lexical_cast reads "-1" as 2^64 - 1 for an unsigned option).
inline ParsedCount parse_count(CountRange const& r, std::string_view text) {
  ParsedCount parsed;
  auto const* end = text.data() + text.size();
  auto const [stop, ec] = std::from_chars(text.data(), end, parsed.value);
  if (ec == std::errc::result_out_of_range && stop == end) {
    parsed.error = std::string(r.what) + " " + std::string(text) + " is not allowed (" + range_text(r) + ")";
    return parsed;
  }
  if (text.empty() || ec != std::errc() || stop != end) {
    parsed.error = std::string(r.what) + " '" + std::string(text) + "' is not allowed (a whole number, " +
                   range_text(r) + ")";
    return parsed;
  }
  if (auto complaint = out_of_range(r, parsed.value)) parsed.error = *complaint;
  return parsed;
}

}  // namespace fl::common
