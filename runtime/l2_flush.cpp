#include "runtime/l2_flush.hpp"

#include <algorithm>

namespace fl::runtime {
namespace {
constexpr std::size_t kMinimumFlushBytes = 64u << 20;  // when the driver reports no L2 size
constexpr std::size_t kWordBytes = 4;
}  // namespace

Result<L2Flusher> L2Flusher::create(DeviceInfo const& device) {
  std::size_t bytes = std::max(kL2FlushFactor * device.l2_bytes, kMinimumFlushBytes);
  bytes = (bytes + kWordBytes - 1) / kWordBytes * kWordBytes;
  auto scratch = DeviceBuffer::allocate(bytes);
  if (!scratch.ok()) return scratch.error();
  return L2Flusher(std::move(scratch).value());
}

Status L2Flusher::flush() { return scratch_.fill_words(++pass_); }

}  // namespace fl::runtime
