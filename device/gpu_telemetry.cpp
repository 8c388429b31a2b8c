#include "device/gpu_telemetry.hpp"

#include <cstdio>
#include <string>

namespace fl::device {

GpuTelemetry parse_gpu_telemetry(char const* line) {
  double clock = 0.0, temperature = 0.0;
  if (line == nullptr || std::sscanf(line, " %lf , %lf", &clock, &temperature) != 2) return {};
  return {clock, temperature};
}

namespace {
// The first line nvidia-smi prints for `query` on GPU `ordinal`, or nullopt.
std::optional<std::string> nvidia_smi_line(std::string const& query, int ordinal) {
  std::string const command = "nvidia-smi --query-gpu=" + query + " --format=csv,noheader,nounits -i " +
                              std::to_string(ordinal) + " 2>/dev/null";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  char line[128] = {};
  char const* got = std::fgets(line, sizeof line, pipe);
  pclose(pipe);
  if (got == nullptr) return std::nullopt;
  return std::string(got);
}
}  // namespace

std::optional<std::string> parse_driver_release(char const* line) {
  if (line == nullptr) return std::nullopt;
  std::string text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  while (!text.empty() && text.front() == ' ') text.erase(text.begin());
  bool digit = false, dot = false;
  for (char c : text) {
    if (c >= '0' && c <= '9')
      digit = true;
    else if (c == '.')
      dot = true;
    else
      return std::nullopt;
  }
  if (!digit || !dot) return std::nullopt;
  return text;
}

std::optional<std::string> read_driver_release(int ordinal) {
  auto const line = nvidia_smi_line("driver_version", ordinal);
  return line ? parse_driver_release(line->c_str()) : std::nullopt;
}

GpuTelemetry read_gpu_telemetry(int ordinal) {
  std::string const command =
      "nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader,nounits -i " +
      std::to_string(ordinal) + " 2>/dev/null";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  char line[128] = {};
  char const* got = std::fgets(line, sizeof line, pipe);
  pclose(pipe);
  return parse_gpu_telemetry(got);
}

}  // namespace fl::device

namespace fl::device {

std::optional<std::string> read_gpu_uuid(int ordinal) {
  auto line = nvidia_smi_line("uuid", ordinal);
  if (!line) return std::nullopt;
  while (!line->empty() && (line->back() == '\n' || line->back() == '\r' || line->back() == ' '))
    line->pop_back();
  if (!line->starts_with("GPU-")) return std::nullopt;
  return line;
}

}  // namespace fl::device
