#pragma once
// Whether this process can use a CUDA GPU, for the test main's skip logic.
#include <optional>
#include <string>

namespace fl::test {

// std::nullopt when a CUDA driver loads and reports at least one device; otherwise the one-line reason
// ("no CUDA driver: ..." or "no CUDA device: ...").
std::optional<std::string> gpu_unavailable_reason();

}  // namespace fl::test
