#pragma once
// Evicts the L2 cache between timed runs by writing a buffer larger than it, so that a repeated launch
// does not measure inputs the previous one left in L2 (ARCHITECTURE.md, timing conventions).
#include <cstddef>
#include <cstdint>
#include <utility>

#include "runtime/device.hpp"
#include "runtime/device_buffer.hpp"

namespace fl::runtime {

// Twice the L2: one pass of writes then leaves (almost) none of the previous working set resident.
inline constexpr std::size_t kL2FlushFactor = 2;

class L2Flusher {
 public:
  static Result<L2Flusher> create(DeviceInfo const& device);

  // Enqueues the overwrite on the default stream; call before recording the start event.
  Status flush();
  std::size_t bytes() const { return scratch_.bytes(); }

 private:
  explicit L2Flusher(DeviceBuffer scratch) : scratch_(std::move(scratch)) {}

  DeviceBuffer scratch_;
  std::uint32_t pass_ = 0;  // a different value each pass, so no write can be elided as redundant
};

}  // namespace fl::runtime
