// One load through the cache: docs/client-guide.md §4 "What happens on a load" as code, in stages.
//
//   source   key/image_source.hpp: a cubin → the driver loads it as given (pass_through); a fat
//            binary → walked for the current device: a cubin it runs → pass_through, else its best
//            PTX with the ptxas options stored beside it; PTX → itself
//   key      key/key_builder.hpp: PTX newer than the driver JIT-compiles, or an option the cache
//            does not understand → uncached_fallback; else the key's fields (device CC, PTX
//            .target, driver API + build, canonical options) and its fast key (XXH3-128), the
//            content digest computed on other threads meanwhile
//   cache    through the CachePort (cache_port.hpp):
//            published → the daemon's published copy of the entry (<socket>.published/<fast key
//              id>), when there is one and it passes the port's file checks and then, once the
//              content digest is ready, the same checks as a socket hit: loaded with no round trip,
//              the hit noted for the daemon later; anything wrong with it → counted
//              (published_rejects) and on to the LOOKUP
//            LOOKUP (lookup_policy.hpp, as a link's) → one round trip: by fast key where the daemon has fast
//              keys (HELLO capability bit 5), by key where it has not; an entry found by fast key
//              is used only if its content digest is ours (else → by key, counted as
//              fast_key_mismatches), and a fast-key miss is final
//            hit → check key, size, checksum and ELF bounds, then cuModuleLoadData
//                   → load fails with an image error → REPORT_FAILURE → rebuild as a miss
//            miss, daemon compiles (capability bit 1): COMPILE (interactive) with the PTX,
//              waiting up to compile_timeout
//                   → compiled: checked and loaded as a hit → compiled_by_daemon
//                   → compile error: the driver's own load, so the caller gets its error and log
//                   → cannot compile, busy, worker failed, timed out: as a miss without it
//                   → the daemon died: the uncached fallback
//            miss: JIT with cuLink* and the caller's options, load the cubin, PUT it
//   driver   every step that loads or compiles goes through the DriverApi handed in
//   anything the cache cannot do (daemon absent, slow or broken, disabled, no cuLink, a JIT that
//   fails) → cuModuleLoadDataEx with the caller's options, so the caller gets exactly the driver's
//   behaviour, error and log; resource errors (out of memory, no context) go back unchanged.
//
// Thread safety: one LoadFlow and one CachePort per call; the driver is shared and thread-safe.
#pragma once

#include <cuda.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <client/src/driver/device_query.hpp>
#include <client/src/driver/driver_api.hpp>
#include <client/src/key/image_source.hpp>
#include <client/src/key/key_builder.hpp>
#include <client/src/loader/cache_port.hpp>
#include <client/src/loader/caller_options.hpp>
#include <client/src/loader/client_counters.hpp>
#include <client/src/loader/client_settings.hpp>
#include <client/src/loader/image_target.hpp>
#include <client/src/loader/load_record.hpp>

namespace jitcache::client::loader {

class LoadFlow {
 public:
  // `settings` are the configuration the load runs under (the port's daemon link has the same).
  LoadFlow(const driver::DriverApi& api, CachePort& cache, const ClientSettings& settings, ClientCounters& counters,
           LoadRecord& record)
      : m_api(api), m_cache(cache), m_settings(settings), m_counters(counters), m_record(record) {}

  // Loads into `target` (image_target.hpp); the first form into a module of the current context.
  CUresult load(CUmodule* module, const void* image, const CallerOptions& options);
  CUresult load(ImageTarget& target, const void* image, const CallerOptions& options);

 private:
  // A load's key once built, and the one wait for its content digest.
  struct LoadKey {
    key::BuiltKey built;
    LoadRecord& record;
    bool recorded = false;
    // The whole key (content digest included), recorded on first use. Both the published copy and
    // the LOOKUP may need it first.
    const proto::KeyFields& complete();
  };

  // Stage: source (the image → its PTX, or the driver's own load).
  CUresult load_image(ImageTarget& target, const void* image, const CallerOptions& options);
  // Stages: key, cache, driver.
  CUresult load_ptx(ImageTarget& target, const void* image, const CallerOptions& options, const key::PtxSource& source,
                    const driver::ComputeCapability& device);
  // The daemon's entry for this key: one LOOKUP where the daemon's capabilities allow
  // (lookup_policy.hpp; load_flow_lookup.cpp).
  common::Result<std::optional<transport::FetchedImage>> look_up(LoadKey& key, transport::ImageDelivery delivery);
  // The hit path (also for an image the daemon compiled: `success` says which outcome a clean load
  // is); nullopt when the image must be rebuilt (damaged reply, or a bad image reported to the
  // daemon when it can be reached).
  std::optional<CUresult> load_hit(ImageTarget& target, const CallerOptions& options,
                                   const transport::FetchedImage& fetched, const proto::KeyFields& key,
                                   jitcache_load_outcome success = JITCACHE_OUTCOME_HIT, bool published = false);
  // The published copy (load_flow_published.cpp): the load's result, or nullopt to go on to the
  // LOOKUP (no file, or one that failed a check).
  std::optional<CUresult> load_published(ImageTarget& target, const void* image, const CallerOptions& options,
                                         const key::PtxSource& source, LoadKey& key);
  // A miss: COMPILE when the daemon compiles, else (or when it cannot) compile_locally.
  CUresult load_miss(ImageTarget& target, const void* image, const CallerOptions& options, const key::PtxSource& source,
                     LoadKey& key);
  // JIT with cuLink*, load, and PUT when `store`; the plain driver load when the JIT or the load fails.
  CUresult compile_locally(ImageTarget& target, const void* image, const CallerOptions& options,
                           const key::PtxSource& source, LoadKey& key, bool store,
                           jitcache_load_outcome success_outcome);
  void put(LoadKey& key, const std::vector<std::uint8_t>& cubin, std::uint64_t compile_time_us);

  // The driver's own load with the caller's options, recorded as `outcome` with `why`.
  CUresult driver_load(ImageTarget& target, const void* image, const CallerOptions& options,
                       jitcache_load_outcome outcome, std::string_view why);
  CUresult daemon_failed(ImageTarget& target, const void* image, const CallerOptions& options,
                         const common::Error& error);

  const driver::DriverApi& m_api;
  CachePort& m_cache;
  const ClientSettings& m_settings;
  ClientCounters& m_counters;
  LoadRecord& m_record;
};

}  // namespace jitcache::client::loader
