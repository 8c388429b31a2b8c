#include "runtime/event.hpp"

#include <utility>

namespace fl::runtime {

Result<Event> Event::create() {
  auto loaded = driver_api();
  if (!loaded.ok()) return loaded.error();
  DriverApi const* api = loaded.value();
  CUevent event = nullptr;
  // Default flags: timing enabled (CU_EVENT_DISABLE_TIMING would make elapsed_ms fail).
  if (CUresult rc = api->cuEventCreate(&event, CU_EVENT_DEFAULT); rc != CUDA_SUCCESS) {
    return driver_error(*api, rc, "cuEventCreate", "event");
  }
  return Event(api, event);
}

Event::Event(Event&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)), event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy();
    api_ = std::exchange(other.api_, nullptr);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

Event::~Event() { destroy(); }

void Event::destroy() {
  if (event_ == nullptr) return;
  api_->cuEventDestroy(event_);
  event_ = nullptr;
}

Status Event::record(CUstream stream) {
  return check_driver(*api_, api_->cuEventRecord(event_, stream), "cuEventRecord", "event");
}

Status Event::synchronize() const {
  return check_driver(*api_, api_->cuEventSynchronize(event_), "cuEventSynchronize", "event");
}

Result<float> elapsed_ms(Event const& start, Event const& end) {
  if (auto done = end.synchronize(); !done.ok()) return done.error();
  auto const& api = *driver_api().value();
  float milliseconds = 0.0f;
  if (CUresult rc = api.cuEventElapsedTime(&milliseconds, start.handle(), end.handle()); rc != CUDA_SUCCESS) {
    return driver_error(api, rc, "cuEventElapsedTime", "event");
  }
  return milliseconds;
}

}  // namespace fl::runtime
