#pragma once
// A recorded tuning run: the TSV that `fa-tune --export-measurements` writes (tests/tuner/data holds one
// measured on the H200), read back as rows keyed by family, problem (describe()) and config text.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "db/tuning_store.hpp"

namespace fl::tuner {

struct RecordedRow {
  db::Measurement measurement;
  // Where the time went for this candidate, when the recording has the columns (recordings before
  // 2026-12-01 do not): ms on the GPU thread waiting for its compile, verifying, timing; NVRTC ms.
  std::optional<double> compile_wait_ms, verify_ms, timing_ms, compile_ms;
};

struct Recording {
  std::string gpu_line;  // the "# GPU ..." comment, as written
  // (family, problem, config) -> row, and each (family, problem)'s rows in recording order.
  std::map<std::tuple<std::string, std::string, std::string>, RecordedRow> rows;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> order;
};

// Throws std::runtime_error naming the file and line for anything that is not such a TSV.
Recording read_recording(std::filesystem::path const& path);

}  // namespace fl::tuner
