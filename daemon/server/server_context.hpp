// What every connection shares with the server: configuration, the request handler, counters, the
// store's executors, the request bytes budget and the drain flag. Owned by Server; outlives every
// connection.
// Thread safety: all members are thread-safe or immutable after start-up.
#pragma once

#include <atomic>

#include <boost/asio/thread_pool.hpp>

#include <daemon/config/config.hpp>
#include <daemon/policy/request_bytes_budget.hpp>
#include <daemon/server/image_descriptors.hpp>
#include <daemon/server/request_handler.hpp>
#include <daemon/server/warning_throttle.hpp>
#include <daemon/stats/counters.hpp>

namespace jitcache::daemon::server {

class CompileRequests;
class BundleService;
class DiagnosisLane;

struct ServerContext {
  const config::Config& config;
  RequestHandler& handler;
  CompileRequests* compile;  // null: the daemon cannot compile (COMPILE goes to the handler)
  stats::Counters& counters;
  boost::asio::thread_pool& writer;
  boost::asio::thread_pool& maintenance;
  BundleService* bundles;                 // null: EXPORT_BUNDLE and IMPORT_BUNDLE are not offered
  boost::asio::thread_pool& bundle_lane;  // where they run, one after another
  DiagnosisLane& diagnosis;               // EXPLAIN and MISSES (diagnosis_lane.hpp)
  // Where a LOOKUP that must ask the fleet's remotes runs (remote/defer_remote.hpp); null without
  // a remote tier.
  boost::asio::thread_pool* remote_lane;
  ImageDescriptors& descriptors;
  policy::RequestBytesBudget& request_bytes;  // request_bytes_per_uid and request_bytes_total
  WarningThrottle& descriptor_warnings;       // images that could not go by descriptor
  std::atomic<bool> draining{false};
};

}  // namespace jitcache::daemon::server
