// Where a backend's commands go: the one server of a standalone Redis, or, in a Redis Cluster,
// the master that serves the key's hash slot, following the Cluster's redirections (MOVED, ASK)
// and waiting out TRYAGAIN and CLUSTERDOWN while the deadline allows. A reply of the server's own
// (-ERR, NOPERM, ...) comes back as a reply, with the node that gave it, for the caller to judge;
// failures to reach or read a node come back as errors (RedisConnection::exchange).
// Thread safety: every method may be called from any number of threads.
#pragma once

#include <memory>
#include <vector>

#include <common/result.hpp>
#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/redis/redis_connection.hpp>
#include <daemon/remote/redis/redis_counters.hpp>
#include <daemon/remote/redis/redis_node.hpp>
#include <daemon/remote/redis/redis_reply.hpp>
#include <daemon/remote/redis/redis_settings.hpp>

namespace jitcache::daemon::remote {

struct RoutedReply {
  ReplyPtr reply;
  const RedisNode* node = nullptr;  // the node that answered
};

class CommandRouter {
 public:
  virtual ~CommandRouter() = default;

  // The reply to `command`, which names a key in hash `slot`.
  virtual common::Result<RoutedReply> execute(int slot, const RedisCommand& command, const ReplyLimit& limit,
                                              Deadline deadline) = 0;

  // Every node that serves the remote now: the standalone server, or each master of the slot map
  // (fetched first if need be).
  virtual common::Result<std::vector<RedisNode*>> serving_nodes(Deadline deadline) = 0;
};

// `settings.nodes` must hold one address (standalone) or the seeds (cluster); `nodes` and
// `counters` must outlive the router.
std::unique_ptr<CommandRouter> make_standalone_router(const RedisSettings& settings, NodeDirectory& nodes);
std::unique_ptr<CommandRouter> make_cluster_router(const RedisSettings& settings, NodeDirectory& nodes,
                                                   RedisCounterCells& counters);

}  // namespace jitcache::daemon::remote
