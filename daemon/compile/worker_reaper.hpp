// Reaps compile workers off the compile's path: a worker that has written its whole reply and
// closed its pipes still takes milliseconds to exit (its address space torn down:
// docs/compile-service.md "Spare workers"), and the compile's answer need not wait for that.
// adopt() hands a worker over; a thread of its own kills (a no-op for one already leaving) and
// reaps each, so none is left a zombie for longer than its exit takes. The destructor reaps every
// worker still held before it returns.
// Thread safety: adopt() may be called from many threads at once.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <daemon/compile/worker_process.hpp>

namespace jitcache::daemon::compile {

class WorkerReaper {
 public:
  WorkerReaper();
  ~WorkerReaper();
  WorkerReaper(const WorkerReaper&) = delete;
  WorkerReaper& operator=(const WorkerReaper&) = delete;

  void adopt(WorkerProcess&& worker);

 private:
  void reap();

  std::mutex m_mutex;
  std::condition_variable m_adopted;
  std::deque<WorkerProcess> m_workers;
  bool m_stopping = false;
  std::thread m_thread;
};

}  // namespace jitcache::daemon::compile
