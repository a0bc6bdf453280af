// Builds the daemon's compile path from its configuration: the worker runner under the configured
// limits, the start-up probe of the worker (`jitcache-compile --version`), the compile service with
// its store sink, and the COMPILE op around them. When compiling is turned off, or the worker is
// missing or broken, the daemon serves without it (capability bit 1 clear) and the log says why:
// a cache that cannot compile is still a cache. Either way it records the outcome of the probe in
// the counters (compile_worker_ready, compile_worker_probe_failed, compile_nvjitlink_version), so
// STATS and `jitcache doctor` can say it too; likewise the worker's probe of the NVRTC the
// administrator configured (compile_nvrtc_library: compile_nvrtc_version, compile_nvrtc_probe_failed).
// Thread safety: built once at start-up on the main thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include <daemon/compile/compile_limits.hpp>
#include <daemon/compile/compile_runner.hpp>
#include <daemon/compile/compile_service.hpp>
#include <daemon/compile/job_runner.hpp>
#include <daemon/compile/toolkit_support.hpp>
#include <daemon/compile_store/compile_store_sink.hpp>
#include <daemon/config/config.hpp>
#include <daemon/ops/compile_request.hpp>
#include <daemon/rejit/rejit.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/sources.hpp>
#include <daemon/store/store.hpp>
#include <proto/nvrtc_key.hpp>

namespace jitcache::daemon::publish {
class Publisher;
}

namespace jitcache::daemon::startup {

// Owns the parts in the order they must be destroyed: the re-JIT (which submits to the service),
// then the service (which joins its compile threads and may still call the sink), then the sink.
struct CompilePath {
  // What the workers compile with, for whoever compiles outside the service (the fleet's sampled
  // re-verification: daemon/remote/verify_sampler.hpp).
  std::shared_ptr<compile::JobRunner> runner;
  compile::ToolkitVersion toolkit;
  // The identity of the NVRTC the administrator configured (compile_nvrtc_library), as the worker
  // reported it at its probe; nullopt: none configured, or it failed the probe.
  std::optional<proto::NvrtcIdentity> nvrtc;
  std::unique_ptr<compile_store::CompileStoreSink> sink;
  std::unique_ptr<compile::CompileService> service;
  std::unique_ptr<ops::CompileRequests> requests;
  // Null when rejit_budget is 0 or the store keeps no sources (daemon/rejit/rejit.hpp).
  std::unique_ptr<rejit::Rejit> rejit;
  // Stops what the fleet runs through this path (a builder's compiles of consumers' asks:
  // daemon/remote/ask_desk.hpp) before the service goes; set by attach_compile_path.
  std::function<void()> detach_fleet;

  CompilePath() = default;
  CompilePath(CompilePath&&) = default;
  CompilePath& operator=(CompilePath&&) = default;
  ~CompilePath();
};

compile::CompileLimits compile_limits(const config::Config& config);
compile::CompileServiceConfig compile_service_config(const config::Config& config);

// The worker's probe of compile_nvrtc_library (CompileRunner::probe_nvrtc): its identity, recorded
// in the counters (compile_nvrtc_version), or nullopt when none is configured or the worker cannot
// open it as NVRTC (logged as an error naming the library and why; compile_nvrtc_probe_failed).
// Either way the daemon serves on.
std::optional<proto::NvrtcIdentity> probe_configured_nvrtc(const config::Config& config, compile::CompileRunner& runner,
                                                           stats::Counters& counters);

// Null when the daemon cannot compile (logged at warning level, or info when turned off).
// `counters` are the server's (the sink counts stored images there); both must outlive the result,
// as must `publisher` (null when publishing is off), which is offered every compiled image, and
// `sources` (the local store's kept sources; null: no re-JIT).
std::unique_ptr<CompilePath> make_compile_path(const config::Config& config, store::Store& store,
                                               stats::Counters& counters, publish::Publisher* publisher = nullptr,
                                               store::Sources* sources = nullptr);

}  // namespace jitcache::daemon::startup
