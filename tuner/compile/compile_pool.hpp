#pragma once
// The compile pool: one worker per core, each with its own device::CompileService (and so its own SQLite
// connection). NVRTC compiles are independent and take ~0.3-3 s each, so a pool of N workers on N
// cores gives close to N times the throughput; the tuner submits ahead and times compiled candidates on
// the GPU while later ones compile.
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "device/compile/compile_service.hpp"

namespace fl::tuner {

class CompilePool {
 public:
  // jobs = 0: std::thread::hardware_concurrency().
  CompilePool(int jobs, std::filesystem::path db_path);
  // Finishes the compiles in progress; queued ones are answered with an Error (stage "cancelled").
  ~CompilePool();
  CompilePool(CompilePool const&) = delete;
  CompilePool& operator=(CompilePool const&) = delete;

  // urgent: the caller is about to wait for it, so it goes before the queued look-ahead compiles.
  std::future<runtime::Result<device::CompileResult>> submit(runtime::CompileRequest request,
                                                             bool urgent = false);
  int workers() const { return static_cast<int>(threads_.size()); }

 private:
  struct Job {
    runtime::CompileRequest request;
    std::promise<runtime::Result<device::CompileResult>> done;
  };
  void work(std::filesystem::path const& db_path);

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace fl::tuner
