// Compile workers started ahead of need: each is a `jitcache-compile` process already exec'd, with
// nvJitLink loaded, blocked reading its job from stdin, so a compile that takes one pays no fork,
// exec or library load (~11 ms on the 2-core machine, most of a cold miss's cost beyond the
// compile itself: docs/benchmarks.md "A cold miss").
//
// Isolation is as before: a spare runs exactly one job and exits, under the same limits, started
// by the same WorkerProcess::spawn. take() hands a ready spare over (one that has exited meanwhile
// is reaped and skipped) or, with none ready, spawns a worker on the caller's thread, as the runner
// always did. A thread of its own starts a new spare whenever fewer than `count` are ready; when a
// start fails it waits a second before trying again. A daemon that dies takes its spares with it:
// their stdin closes and they exit on the empty job.
// Thread safety: take() may be called from many threads at once.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include <common/result.hpp>

#include <daemon/compile/worker_process.hpp>

namespace jitcache::daemon::compile {

class SpareWorkers {
 public:
  using Spawn = std::function<common::Result<WorkerProcess>()>;

  // Keeps `count` spares ready (0: none, take() always spawns). The first is started at once.
  SpareWorkers(Spawn spawn, std::size_t count);
  ~SpareWorkers();  // stops the thread; the spares still waiting are killed and reaped
  SpareWorkers(const SpareWorkers&) = delete;
  SpareWorkers& operator=(const SpareWorkers&) = delete;

  common::Result<WorkerProcess> take();

  std::size_t ready() const;  // spares waiting now (for tests and logs)

 private:
  void keep_filled();

  Spawn m_spawn;
  std::size_t m_count;
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<WorkerProcess> m_ready;
  bool m_stopping = false;
  std::thread m_filler;
};

}  // namespace jitcache::daemon::compile
