#include "tuner/tune/recorded_measurements.hpp"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fl::tuner {

namespace {

// A whole family's space over every headline shape is a few MB of TSV; 256 MiB is far beyond any.
constexpr std::uintmax_t kMaxRecordingBytes = std::uintmax_t(256) << 20;

std::vector<std::string> split_tabs(std::string const& line) {
  std::vector<std::string> fields;
  std::stringstream ss(line);
  for (std::string field; std::getline(ss, field, '\t');) fields.push_back(field);
  if (!line.empty() && line.back() == '\t') fields.emplace_back();
  return fields;
}

std::optional<double> number(std::string const& text, std::string const& where) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (std::exception const&) {
    used = 0;
  }
  if (used != text.size()) throw std::runtime_error(where + ": '" + text + "' is not a number");
  return value;
}

}  // namespace

Recording read_recording(std::filesystem::path const& path) {
  // A recording is a regular file of a size fa-tune writes: --replay /dev/zero grew one line to 16 GB.
  std::error_code error;
  auto const status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::directory)
    throw std::runtime_error(path.string() + " is a folder, not a recording");
  if (std::filesystem::exists(status) && status.type() != std::filesystem::file_type::regular)
    throw std::runtime_error(path.string() + " is not a regular file (a recording is a TSV file)");
  if (std::filesystem::exists(status) && std::filesystem::file_size(path, error) > kMaxRecordingBytes)
    throw std::runtime_error(path.string() + " is larger than any recording (" +
                             std::to_string(kMaxRecordingBytes) + " bytes at most)");
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the recording " + path.string());
  Recording recording;
  std::map<std::string, std::size_t> column;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    std::string const where = path.string() + ":" + std::to_string(line_number);
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.starts_with("# GPU ")) recording.gpu_line = line.substr(2);
      continue;
    }
    auto const fields = split_tabs(line);
    if (column.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) column[fields[i]] = i;
      for (char const* required : {"family", "problem", "config", "verdict", "median_ms"})
        if (!column.contains(required))
          throw std::runtime_error(where + ": the header has no '" + required + "' column");
      continue;
    }
    auto field = [&](char const* name) -> std::string {
      auto it = column.find(name);
      return it != column.end() && it->second < fields.size() ? fields[it->second] : "";
    };
    RecordedRow row;
    auto& m = row.measurement;
    m.verdict = field("verdict");
    m.diagnosis = field("diagnosis");
    m.median_ms = number(field("median_ms"), where);
    m.p20_ms = number(field("p20_ms"), where);
    m.p80_ms = number(field("p80_ms"), where);
    m.tflops = number(field("tflops"), where);
    row.compile_wait_ms = number(field("compile_wait_ms"), where);
    row.verify_ms = number(field("verify_ms"), where);
    row.timing_ms = number(field("timing_ms"), where);
    row.compile_ms = number(field("compile_ms"), where);
    if (m.verdict.empty()) throw std::runtime_error(where + ": no verdict");
    if (m.verdict == "ok" && !m.median_ms) throw std::runtime_error(where + ": an ok row without median_ms");
    auto key = std::make_tuple(field("family"), field("problem"), field("config"));
    if (!recording.rows.contains(key))
      recording.order[{std::get<0>(key), std::get<1>(key)}].push_back(std::get<2>(key));
    recording.rows[key] = std::move(row);
  }
  if (column.empty())
    throw std::runtime_error(path.string() + ": no header line (family, problem, config, ...)");
  return recording;
}

}  // namespace fl::tuner
