#include <client/src/api/cached_load.hpp>

#include <exception>
#include <optional>
#include <string>

#include <client/src/loader/client_runtime.hpp>
#include <client/src/loader/daemon_cache_port.hpp>
#include <client/src/loader/load_flow.hpp>
#include <client/src/loader/load_record.hpp>
#include <client/src/loader/process_report.hpp>

namespace jitcache::client::api {

using loader::CallerOptions;
using loader::ClientRuntime;
using loader::DaemonCachePort;
using loader::DaemonLease;
using loader::DaemonLink;
using loader::LoadFlow;
using loader::LoadRecord;

namespace {

// Ends a load: makes the record the thread's last and notes it for JITCACHE_REPORT.
void finish(LoadRecord& record, CUresult result, std::string_view entry_point, bool quiet) {
  record.finish(result);
  loader::ProcessReport::note(record.info(), entry_point, quiet);
}

}  // namespace

CUresult cached_load(const CachedLoadCall& call, const MakeTarget& make_target) {
  ClientRuntime& runtime = ClientRuntime::instance();
  LoadRecord record;
  // Rationale: connecting before anything else lets an idle daemon wake up (a few hundred
  // microseconds on a virtual machine, most of a small module's hit: docs/benchmarks.md) while the
  // driver is resolved and the image classified and keyed. A load that never asks the daemon hands
  // the connection back to the pool unused. Where the daemon publishes its entries, a hit may need
  // no connection at all, so the flow connects when it knows it needs one (load_flow.cpp).
  std::shared_ptr<DaemonLink> daemon = [&] {
    auto timer = record.step(&jitcache_load_info::ns_setup);
    return runtime.daemon();
  }();
  std::optional<common::Result<DaemonLease>> early_lease;
  if (call.connect_early && !daemon->settings().disabled && call.image != nullptr &&
      !loader::reads_published_copies(daemon->settings())) {
    auto timer = record.step(&jitcache_load_info::ns_lookup);
    early_lease.emplace(daemon->acquire());
  }
  const auto& api = [&]() -> decltype(runtime.driver()) {
    auto timer = record.step(&jitcache_load_info::ns_setup);
    return runtime.driver();
  }();
  if (!api) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason(api.error().message);
    record.stage(JITCACHE_STAGE_CACHE, CUDA_ERROR_NOT_INITIALIZED);
    finish(record, CUDA_ERROR_NOT_INITIALIZED, call.entry_point, daemon->settings().quiet);
    return CUDA_ERROR_NOT_INITIALIZED;
  }
  const driver::DriverApi& driver = **api;
  if (!driver.can_load()) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("the driver cannot load modules: " + driver.missing_summary());
    finish(record, CUDA_ERROR_NOT_SUPPORTED, call.entry_point, daemon->settings().quiet);
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  CallerOptions caller(call.num_options, call.options, call.option_values);
  std::unique_ptr<loader::ImageTarget> target = make_target(driver, caller);
  CUresult result = CUDA_ERROR_UNKNOWN;
  try {
    DaemonCachePort cache(daemon, runtime.counters());
    if (early_lease) cache.use_connection(std::move(*early_lease));
    LoadFlow flow(driver, cache, daemon->settings(), runtime.counters(), record);
    result = flow.load(*target, call.image, caller);
  } catch (const std::exception& error) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason(std::string("internal error in the cache (") + error.what() + "): loaded without it");
    result = target->load_as_given(call.image, call.num_options, call.options, call.option_values);
  } catch (...) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("internal error in the cache: loaded without it");
    result = target->load_as_given(call.image, call.num_options, call.options, call.option_values);
  }
  runtime.counters().count_outcome(record.outcome());
  finish(record, result, call.entry_point, daemon->settings().quiet);
  return result;
}

}  // namespace jitcache::client::api
