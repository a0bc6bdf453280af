// One load through the cache: docs/client-guide.md §4 "What happens on a load" as code.
//
//   classify → cubin: the driver loads it as given (pass_through)
//            → fat binary: walk it; a cubin this device runs → pass_through; else its best PTX
//            → PTX
//   key      → device CC, PTX .target, driver API + build, canonical options (+ embedded ptxas
//              options); an option it does not understand → uncached_fallback
//   published → the daemon's published copy of the entry (<socket>.published/<fast key id>), when
//              there is one and it passes the owner, mode, format and checksum checks and then,
//              once the content digest is ready, the same checks as a socket hit: loaded with no
//              round trip, and HIT_NOTE sent on the early connection without waiting; anything
//              wrong with it → counted (published_rejects) and on to the LOOKUP
//   LOOKUP   → by the fast key (XXH3-128) while the content digest is computed on other threads;
//              an entry whose content digest is not ours, or a miss, → LOOKUP by the full key
//            → hit: check key, size, checksum and ELF bounds, then cuModuleLoadData
//                   → load fails with an image error → REPORT_FAILURE → rebuild as a miss
//            → miss, daemon compiles (HELLO capability bit 1): COMPILE (interactive) with the PTX,
//              waiting up to compile_timeout
//                   → compiled: checked and loaded as a hit → compiled_by_daemon
//                   → compile error: the driver's own load, so the caller gets its error and log
//                   → cannot compile, busy, worker failed, timed out: as a miss without it
//                   → the daemon died: the uncached fallback
//            → miss: JIT with cuLink* and the caller's options, load the cubin, PUT it
//   anything the cache cannot do (daemon absent, slow or broken, disabled, no cuLink, a JIT that
//   fails) → cuModuleLoadDataEx with the caller's options, so the caller gets exactly the driver's
//   behaviour, error and log; resource errors (out of memory, no context) go back unchanged.
//
// Thread safety: one LoadFlow per call; the driver and the daemon link are shared and thread-safe.
#pragma once

#include <cuda.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <client/src/driver/device_query.hpp>
#include <client/src/driver/driver_api.hpp>
#include <client/src/loader/caller_options.hpp>
#include <client/src/loader/client_counters.hpp>
#include <client/src/loader/daemon_link.hpp>
#include <client/src/loader/load_record.hpp>

namespace jitcache::client::loader {

class LoadFlow {
 public:
  LoadFlow(const driver::DriverApi& api, std::shared_ptr<DaemonLink> daemon, ClientCounters& counters,
           LoadRecord& record)
      : m_api(api), m_daemon(std::move(daemon)), m_counters(counters), m_record(record) {}

  // A connection (or the reason there is none) acquired before the flow started, used instead of
  // acquiring one when the load gets to the daemon.
  void use_connection(proto::Result<DaemonLease> lease) { m_early_lease.emplace(std::move(lease)); }

  CUresult load(CUmodule* module, const void* image, const CallerOptions& options);

 private:
  struct PtxSource {
    std::string_view borrowed;               // the caller's PTX text, without its NUL
    std::optional<std::string> copy;         // a fat binary entry's PTX, copied so it ends in a NUL
    std::vector<JitOptionValue> embedded;    // ptxas options of a fat binary entry
    std::string_view text() const { return copy ? std::string_view(*copy) : borrowed; }
    const char* nul_terminated() const { return copy ? copy->c_str() : borrowed.data(); }
  };

  // What a PUT of this key can carry besides the image: the fast key's content, when the daemon
  // knows fast keys.
  struct StoreHint {
    std::optional<proto::Checksum128> content_fast;
  };

  CUresult load_ptx(CUmodule* module, const void* image, const CallerOptions& options, PtxSource source,
                    const driver::ComputeCapability& device);
  // A connection to the daemon made when first needed, or null when it cannot be had.
  using LeaseSource = std::function<DaemonLease*()>;
  // The hit path (also for an image the daemon compiled: `success` says which outcome a clean load
  // is); nullopt when the image must be rebuilt (damaged reply, or a bad image reported). `lease`
  // is asked for only to report a bad image; null (a published copy loaded with the daemon down):
  // the bad image is then not reported.
  std::optional<CUresult> load_hit(CUmodule* module, const CallerOptions& options, const LeaseSource& lease,
                                   const transport::FetchedImage& fetched, const proto::KeyFields& key,
                                   jitcache_load_outcome success = JITCACHE_OUTCOME_HIT, bool published = false);
  // The published copy (load_flow_published.cpp): the load's result, or nullopt to go on to the
  // LOOKUP (no file, or one that failed a check). `record_key` waits for the content digest.
  std::optional<CUresult> load_published(CUmodule* module, const void* image, const CallerOptions& options,
                                         const PtxSource& source, const proto::KeyFields& key,
                                         const proto::FastKey& fast_key, const std::function<void()>& record_key,
                                         const LeaseSource& lease);
  // A miss: COMPILE when the daemon compiles, else (or when it cannot) compile_locally.
  CUresult load_miss(CUmodule* module, const void* image, const CallerOptions& options, const PtxSource& source,
                     const proto::KeyFields& key, const StoreHint& hint, DaemonLease& lease);
  // JIT with cuLink*, load, PUT; the plain driver load when the JIT or the load fails.
  CUresult compile_locally(CUmodule* module, const void* image, const CallerOptions& options, const PtxSource& source,
                           const proto::KeyFields& key, const StoreHint& hint, DaemonLease* lease,
                           jitcache_load_outcome success_outcome);
  void put(DaemonLease& lease, const proto::KeyFields& key, const StoreHint& hint, const std::vector<std::uint8_t>& cubin,
           std::uint64_t compile_time_us);

  // The driver's own load with the caller's options, recorded as `outcome` with `why`.
  CUresult driver_load(CUmodule* module, const void* image, const CallerOptions& options,
                       jitcache_load_outcome outcome, std::string_view why);
  CUresult daemon_failed(CUmodule* module, const void* image, const CallerOptions& options, const proto::Error& error);

  const driver::DriverApi& m_api;
  std::shared_ptr<DaemonLink> m_daemon;
  ClientCounters& m_counters;
  LoadRecord& m_record;
  std::optional<proto::Result<DaemonLease>> m_early_lease;
};

}  // namespace jitcache::client::loader
