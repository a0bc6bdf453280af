#include <daemon/compile/spare_workers.hpp>

#include <chrono>
#include <utility>

#include <spdlog/spdlog.h>

namespace jitcache::daemon::compile {

namespace {

// Rationale: a worker that cannot be started now (no such file, fork refused) is unlikely to start
// a moment later; trying once a second costs nothing and a compile still spawns its own meanwhile.
constexpr std::chrono::seconds k_retry_after{1};

}  // namespace

SpareWorkers::SpareWorkers(Spawn spawn, std::size_t count) : m_spawn(std::move(spawn)), m_count(count) {
  if (m_count > 0) m_filler = std::thread([this] { keep_filled(); });
}

SpareWorkers::~SpareWorkers() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_changed.notify_all();
  if (m_filler.joinable()) m_filler.join();
  // m_ready's destructor kills and reaps each spare (WorkerProcess::~WorkerProcess).
}

common::Result<WorkerProcess> SpareWorkers::take() {
  {
    std::unique_lock lock(m_mutex);
    while (!m_ready.empty()) {
      WorkerProcess spare = std::move(m_ready.front());
      m_ready.pop_front();
      if (!spare.running()) continue;  // died while it waited (killed from outside): reaped here
      lock.unlock();
      m_changed.notify_one();
      return spare;
    }
  }
  m_changed.notify_one();
  return m_spawn();
}

std::size_t SpareWorkers::ready() const {
  std::lock_guard lock(m_mutex);
  return m_ready.size();
}

void SpareWorkers::keep_filled() {
  std::unique_lock lock(m_mutex);
  bool logged_failure = false;
  while (!m_stopping) {
    if (m_ready.size() >= m_count) {
      m_changed.wait(lock, [this] { return m_stopping || m_ready.size() < m_count; });
      continue;
    }
    lock.unlock();
    auto started = m_spawn();
    lock.lock();
    if (started) {
      m_ready.push_back(std::move(*started));
      logged_failure = false;
      continue;
    }
    if (!logged_failure) {
      spdlog::warn("compile: cannot start a spare compile worker ({}); compiles start their own",
                   started.error().message);
      logged_failure = true;
    }
    m_changed.wait_for(lock, k_retry_after, [this] { return m_stopping; });
  }
}

}  // namespace jitcache::daemon::compile
