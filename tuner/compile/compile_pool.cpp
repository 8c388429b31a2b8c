#include "tuner/compile/compile_pool.hpp"

#include <algorithm>

#include "db/schema.hpp"

namespace fl::tuner {

CompilePool::CompilePool(int jobs, std::filesystem::path db_path) {
  // Create and migrate the database once, here, before the workers open their own connections: N
  // connections racing to create a fresh file contend for the lock that switching to WAL takes.
  if (!db_path.empty()) db::open_database(db_path);
  int const n = jobs > 0 ? jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  for (int i = 0; i < n; ++i) threads_.emplace_back([this, db_path] { work(db_path); });
}

CompilePool::~CompilePool() {
  std::deque<Job> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    // Queued jobs nobody waits for any more (look-ahead compiles past the end of a tuning run) are dropped,
    // not compiled: the workers finish only what they hold.
    dropped.swap(queue_);
  }
  for (auto& job : dropped)
    job.done.set_value(runtime::Error{"cancelled", "the compile pool was shut down", ""});
  ready_.notify_all();
  for (auto& t : threads_) t.join();
}

std::future<runtime::Result<device::CompileResult>> CompilePool::submit(runtime::CompileRequest request,
                                                                        bool urgent) {
  Job job{std::move(request), {}};
  auto future = job.done.get_future();
  {
    std::lock_guard lock(mutex_);
    if (urgent)
      queue_.push_front(std::move(job));
    else
      queue_.push_back(std::move(job));
  }
  ready_.notify_one();
  return future;
}

void CompilePool::work(std::filesystem::path const& db_path) {
  // Opening the database can fail (unwritable path): every job this worker takes then reports it.
  std::unique_ptr<device::CompileService> service;
  std::string open_error;
  try {
    service = std::make_unique<device::CompileService>(db_path);
  } catch (std::exception const& e) {
    open_error = e.what();
  }
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    if (!service) {
      job.done.set_value(runtime::Error{"cache", "cannot open the database: " + open_error, ""});
      continue;
    }
    try {
      job.done.set_value(service->compile(job.request));
    } catch (std::exception const& e) {  // a SQLite error must not take the pool down
      job.done.set_value(runtime::Error{"cache", e.what(), ""});
    }
  }
}

}  // namespace fl::tuner
