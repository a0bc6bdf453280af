#include <daemon/startup/compile_setup.hpp>

#include <spdlog/spdlog.h>

#include <daemon/compile/compile_runner.hpp>
#include <daemon/compile/worker_path.hpp>

namespace jitcache::daemon::startup {

CompilePath::~CompilePath() {
  if (detach_fleet) detach_fleet();
  if (requests) requests->watch_asks(nullptr);
  rejit.reset();
  requests.reset();
  service.reset();
  sink.reset();
}

compile::CompileLimits compile_limits(const config::Config& config) {
  compile::CompileLimits limits;
  // RLIMIT_CPU counts whole seconds: round up, so a limit is never tighter than configured.
  limits.cpu_time = std::chrono::ceil<std::chrono::seconds>(config.compile_cpu_time);
  limits.address_space_bytes = config.compile_memory;
  limits.wall_time = config.compile_wall_time;
  return limits;
}

compile::CompileServiceConfig compile_service_config(const config::Config& config) {
  compile::CompileServiceConfig service;
  service.max_concurrent = config.compile_jobs;
  service.max_queued = config.compile_queue;
  service.max_queued_per_tenant = config.compile_queue_per_uid;
  service.max_bytes_per_tenant = config.compile_bytes_per_uid;
  service.negative_ttl = config.compile_failure_ttl;
  return service;
}

std::optional<proto::NvrtcIdentity> probe_configured_nvrtc(const config::Config& config, compile::CompileRunner& runner,
                                                           stats::Counters& counters) {
  const std::string& library = config.compile_nvrtc_library;
  if (library.empty()) return std::nullopt;
  auto identity = runner.probe_nvrtc(library);
  if (!identity) {
    counters.compile_nvrtc_probe_failed.store(1);
    spdlog::error("compile_nvrtc_library {} is not used: {}; the daemon runs no NVRTC compiles itself", library,
                  identity.error().message);
    return std::nullopt;
  }
  counters.compile_nvrtc_version.store(1000ull * static_cast<unsigned>(identity->major) +
                                       10ull * static_cast<unsigned>(identity->minor));
  spdlog::info("NVRTC compiles with {} (NVRTC {}.{}, library {}, builtins {})", library, identity->major,
               identity->minor, proto::to_hex(identity->library), proto::to_hex(identity->builtins));
  return *identity;
}

std::unique_ptr<CompilePath> make_compile_path(const config::Config& config, store::Store& store,
                                               stats::Counters& counters, publish::Publisher* publisher,
                                               store::Sources* sources) {
  if (!config.compile) {
    spdlog::info("compiling is turned off (compile = false): clients JIT misses with their own driver");
    if (!config.compile_nvrtc_library.empty()) {
      spdlog::warn("compile_nvrtc_library {} is not used: compiling is turned off", config.compile_nvrtc_library);
    }
    return nullptr;
  }
  const std::string worker = config.compile_worker.empty() ? compile::default_worker_path() : config.compile_worker;
  auto runner = std::make_shared<compile::CompileRunner>(worker, compile_limits(config));
  auto toolkit = runner->probe_toolkit();
  if (!toolkit) {
    counters.compile_worker_probe_failed.store(1);
    spdlog::warn(
        "cannot compile: the compile worker {} failed its probe ({}); clients JIT misses with their own driver", worker,
        toolkit.error().message);
    if (!config.compile_nvrtc_library.empty()) counters.compile_nvrtc_probe_failed.store(1);
    return nullptr;
  }
  runner->keep_spares(config.compile_spare_workers);
  counters.compile_worker_ready.store(1);
  counters.compile_nvjitlink_version.store(1000ull * toolkit->major + 10ull * toolkit->minor);
  auto path = std::make_unique<CompilePath>();
  path->runner = runner;
  path->toolkit = *toolkit;
  path->nvrtc = probe_configured_nvrtc(config, *runner, counters);
  path->sink = std::make_unique<compile_store::CompileStoreSink>(store, counters, publisher);
  compile_store::CompileStoreSink& sink = *path->sink;
  path->service = std::make_unique<compile::CompileService>(
      compile_service_config(config), *toolkit, runner,
      [&sink](const proto::Digest256& key_id, const compile::CompileOutcomePtr& outcome,
              const compile::CompileJob& job) { sink(key_id, outcome, job); },
      runner->linker());
  path->requests =
      std::make_unique<ops::CompileRequests>(store, counters, *path->service, sink, config.compile_max_ptx);
  if (path->nvrtc) {
    path->requests->enable_nvrtc(ops::DaemonNvrtc{config.compile_nvrtc_library, *path->nvrtc});
    spdlog::info("compiling eligible NVRTC programs too (capability nvrtc_compile)");
  }
  if (sources != nullptr && config.rejit_budget.count() > 0 && config.source_budget > 0) {
    path->rejit =
        std::make_unique<rejit::Rejit>(*sources, *path->service, sink, counters,
                                       rejit::RejitSettings{
                                           std::chrono::duration_cast<std::chrono::microseconds>(config.rejit_budget)});
    path->requests->watch_asks(path->rejit.get());
    spdlog::info("re-JIT after a driver upgrade or a new arch: up to {} s of compile time a batch",
                 static_cast<double>(config.rejit_budget.count()) / 1000.0);
  }
  if (runner->linker()) {
    spdlog::info("linking nvJitLink sessions of {}/{} too (capability compile_link)", runner->linker()->api,
                 runner->linker()->build);
  }
  spdlog::info(
      "compiling with {} ({}): {} jobs, {} spare workers, queue {} ({} per uid), limits cpu {} s / wall {} ms / "
      "memory {} bytes",
      compile::producer_name(*toolkit), worker, path->service->max_concurrent(), config.compile_spare_workers,
      config.compile_queue, config.compile_queue_per_uid, compile_limits(config).cpu_time.count(),
      config.compile_wall_time.count(), config.compile_memory);
  return path;
}

}  // namespace jitcache::daemon::startup
