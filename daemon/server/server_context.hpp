// What every connection shares with the server: configuration, the request handler, counters, the
// lanes, the request bytes budget and the drain flag. Owned by Server; outlives every
// connection.
// Thread safety: all members are thread-safe or immutable after start-up.
#pragma once

#include <atomic>

#include <boost/asio/thread_pool.hpp>

#include <daemon/config/config.hpp>
#include <daemon/ops/request_handler.hpp>
#include <daemon/policy/request_bytes_budget.hpp>
#include <daemon/server/image_descriptors.hpp>
#include <daemon/server/lanes.hpp>
#include <daemon/server/warning_throttle.hpp>
#include <daemon/stats/counters.hpp>

namespace jitcache::daemon::server {

struct ServerContext {
  const config::Config& config;
  ops::RequestHandler& handler;
  stats::Counters& counters;
  Lanes& lanes;  // where each op runs (the op table's Lane) and its lane's limits
  // Where a LOOKUP that must ask the fleet's remotes runs (remote/defer_remote.hpp); null without
  // a remote tier.
  boost::asio::thread_pool* remote_lane;
  ImageDescriptors& descriptors;
  policy::RequestBytesBudget& request_bytes;  // request_bytes_per_uid and request_bytes_total
  WarningThrottle& descriptor_warnings;       // images that could not go by descriptor
  std::atomic<bool> draining{false};
};

}  // namespace jitcache::daemon::server
