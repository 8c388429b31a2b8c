#pragma once
// SM clock and temperature beside each measurement, read from nvidia-smi (the driver API has no current
// clock or temperature; NVML would be a second library to dlopen for two numbers). Absent nvidia-smi or an
// unreadable answer gives nullopt fields, never an error: telemetry annotates, it does not gate.
#include <optional>
#include <string>

namespace fl::device {

struct GpuTelemetry {
  std::optional<double> sm_clock_mhz;
  std::optional<double> temperature_c;
};

GpuTelemetry read_gpu_telemetry(int ordinal = 0);

// Parses nvidia-smi's "1980, 41" (csv, noheader, nounits); exposed for tests.
GpuTelemetry parse_gpu_telemetry(char const* line);

// The driver release as nvidia-smi prints it ("580.159.04"), which names the driver build; the driver API's
// cuDriverGetVersion only gives the CUDA version it implements (13000), shared by many releases. nullopt
// without nvidia-smi or with an answer that is not a dotted version.
std::optional<std::string> read_driver_release(int ordinal = 0);
std::optional<std::string> parse_driver_release(char const* line);

// The GPU's UUID as nvidia-smi prints it ("GPU-6f1c..."): which device of a multi-GPU host measured a row
// (fa-tune --gpus records it with each worker's run). nullopt without nvidia-smi.
std::optional<std::string> read_gpu_uuid(int ordinal);

}  // namespace fl::device
