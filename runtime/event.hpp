#pragma once
// RAII CUDA events for timing kernels on the GPU's own clock (ARCHITECTURE.md: events around the launch).
#include "runtime/driver_api.hpp"
#include "runtime/result.hpp"

namespace fl::runtime {

class Event {
 public:
  static Result<Event> create();

  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(Event const&) = delete;
  Event& operator=(Event const&) = delete;
  ~Event();

  Status record(CUstream stream = nullptr);
  Status synchronize() const;
  CUevent handle() const { return event_; }

 private:
  Event(DriverApi const* api, CUevent event) : api_(api), event_(event) {}
  void destroy();

  DriverApi const* api_ = nullptr;
  CUevent event_ = nullptr;
};

// Milliseconds between two recorded events; waits for `end` first.
Result<float> elapsed_ms(Event const& start, Event const& end);

}  // namespace fl::runtime
