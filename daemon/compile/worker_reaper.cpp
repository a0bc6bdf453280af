#include <daemon/compile/worker_reaper.hpp>

#include <utility>

namespace jitcache::daemon::compile {

WorkerReaper::WorkerReaper() : m_thread([this] { reap(); }) {}

WorkerReaper::~WorkerReaper() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_adopted.notify_all();
  m_thread.join();
}

void WorkerReaper::adopt(WorkerProcess&& worker) {
  {
    std::lock_guard lock(m_mutex);
    m_workers.push_back(std::move(worker));
  }
  m_adopted.notify_one();
}

void WorkerReaper::reap() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_adopted.wait(lock, [this] { return m_stopping || !m_workers.empty(); });
    if (m_workers.empty()) return;  // stopping, and nothing left to reap
    {
      WorkerProcess worker = std::move(m_workers.front());
      m_workers.pop_front();
      lock.unlock();
    }  // the worker's destructor killed and reaped it, outside the lock
    lock.lock();
  }
}

}  // namespace jitcache::daemon::compile
