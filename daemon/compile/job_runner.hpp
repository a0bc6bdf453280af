// What the compile service needs from whatever runs a job: the real CompileRunner (a worker
// process per job) or a test double.
// Thread safety: run() is called from several compile threads at once and must allow that.
#pragma once

#include <atomic>

#include <daemon/compile/compile_job.hpp>
#include <daemon/compile/compile_outcome.hpp>

namespace jitcache::daemon::compile {

class JobRunner {
 public:
  virtual ~JobRunner() = default;
  // Blocks until the job has an outcome: compiled, compile_error, refused or worker_failed. When
  // `stop` becomes true the job is abandoned (worker_failed, WorkerFailure::cancelled) promptly.
  virtual CompileOutcome run(const CompileJob& job, const std::atomic<bool>& stop) = 0;
};

}  // namespace jitcache::daemon::compile
