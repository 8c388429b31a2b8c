#include "tuner/measure/gpu_telemetry.hpp"

#include <cstdio>
#include <string>

namespace fl::tuner {

GpuTelemetry parse_gpu_telemetry(char const* line) {
  double clock = 0.0, temperature = 0.0;
  if (line == nullptr || std::sscanf(line, " %lf , %lf", &clock, &temperature) != 2) return {};
  return {clock, temperature};
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

}  // namespace fl::tuner
