// Runs one compile job in a fresh `jitcache-compile` worker process under CompileLimits and turns
// whatever happens to the worker into a CompileOutcome. A worker that crashes, hangs, runs out of
// memory or CPU, or writes garbage becomes worker_failed with a message saying which; nothing it
// does reaches the calling process. A worker is reaped before run() returns, except one whose
// whole reply came before its exit, which the runner's reaper reaps moments later. With
// keep_spares(), the worker is one started ahead of need (spare_workers.hpp), still one per job.
// Thread safety: const after construction and keep_spares(); run() may be called from many threads
// at once.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <common/result.hpp>
#include <proto/key.hpp>
#include <proto/nvrtc_key.hpp>

#include <daemon/compile/compile_limits.hpp>
#include <daemon/compile/job_runner.hpp>
#include <daemon/compile/spare_workers.hpp>
#include <daemon/compile/toolkit_support.hpp>
#include <daemon/compile/worker_reaper.hpp>

namespace jitcache::daemon::compile {

class CompileRunner final : public JobRunner {
 public:
  // `worker_path`: the jitcache-compile executable (default_worker_path() in worker_path.hpp).
  CompileRunner(std::string worker_path, CompileLimits limits);
  // Keeps `count` workers started ahead of the jobs that will take them (0: none). Called once,
  // after probe_toolkit() succeeded and before run() is.
  void keep_spares(std::size_t count);

  CompileOutcome run(const CompileJob& job, const std::atomic<bool>& stop) override;
  CompileOutcome run(const CompileJob& job);

  // Runs `jitcache-compile --version`: the nvJitLink version the workers compile with, which the
  // refusal checks need (prepare_job.hpp), and the build of their library (linker() after it). An
  // Error when the worker is missing or broken; the daemon then cannot compile at all.
  common::Result<ToolkitVersion> probe_toolkit();
  // The workers' nvJitLink as a link's key names it (proto/linker_identity.hpp), from the last
  // probe's second line; nullopt when the worker printed none: the daemon then compiles no links.
  const std::optional<proto::DriverId>& linker() const { return m_linker; }

  // Runs `jitcache-compile --nvrtc-identity LIBRARY`: the worker opens the NVRTC the administrator
  // configured (compile_nvrtc_library; the daemon never opens it) and reports its identity as an
  // NVRTC key names it (proto/nvrtc_library_identity.hpp). An Error, with what the worker said, when
  // the library cannot be loaded, is not NVRTC, or its files cannot be read.
  common::Result<proto::NvrtcIdentity> probe_nvrtc(const std::string& library);

  const std::string& worker_path() const { return m_worker_path; }
  const CompileLimits& limits() const { return m_limits; }

 private:
  std::string m_worker_path;
  CompileLimits m_limits;
  std::optional<proto::DriverId> m_linker;
  std::unique_ptr<SpareWorkers> m_spares;
  WorkerReaper m_reaper;  // last: destroyed first, so every worker is reaped before the runner goes
};

// "NVRTC 13.0 <32 hex> <32 hex>", the line `--nvrtc-identity` prints (compile_worker/nvrtc_library.hpp);
// nullopt when it does not read exactly so.
std::optional<proto::NvrtcIdentity> parse_nvrtc_identity_line(std::string_view line);

}  // namespace jitcache::daemon::compile
