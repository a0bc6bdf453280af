// One Redis server of a remote (the standalone server, or one node of a Cluster) and its
// connection pool, and the directory of the nodes a backend knows: the standalone server, or the
// Cluster's seeds and every node its slot map and redirections name.
// Thread safety: RedisNode::run and NodeDirectory may be used from any number of threads. Nodes
// live as long as their directory (none is ever removed), so a RedisNode* taken from it stays
// valid.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <common/result.hpp>
#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/redis/connection_pool.hpp>
#include <daemon/remote/redis/redis_connection.hpp>
#include <daemon/remote/redis/redis_counters.hpp>
#include <daemon/remote/redis/redis_reply.hpp>
#include <daemon/remote/redis/redis_settings.hpp>

namespace jitcache::daemon::remote {

class RedisNode {
 public:
  RedisNode(RedisNodeAddress address, RedisLogin login, std::size_t max_connections, RedisCounterCells& counters);

  const RedisNodeAddress& address() const { return m_pool.address(); }
  const std::string& name() const { return m_name; }  // "host:port"

  // One exchange (RedisConnection::exchange) on a pooled connection, preceded on the same
  // connection by ASKING when `asking` (a Cluster's ASK redirection). When the pooled connection
  // turns out closed by the server before any reply, the idle ones are closed and the exchange is
  // made once more on a new connection.
  common::Result<std::vector<ReplyPtr>> run(std::span<const RedisCommand> commands, const ReplyLimit& limit,
                                            Deadline deadline, bool asking = false);

 private:
  std::string m_name;
  RedisCounterCells& m_counters;
  ConnectionPool m_pool;
};

class NodeDirectory {
 public:
  NodeDirectory(RedisLogin login, std::size_t max_connections_per_node, RedisCounterCells& counters);

  // The node at `address`, made on first use; nullptr once k_max_nodes are known (a hostile
  // cluster naming ever new addresses in its redirections cannot make us open sockets to all).
  RedisNode* node(const RedisNodeAddress& address);

  // Rationale: the largest Redis Cluster the Redis documentation suggests is 1000 nodes.
  static constexpr std::size_t k_max_nodes = 1024;

 private:
  const RedisLogin m_login;
  const std::size_t m_max_connections;
  RedisCounterCells& m_counters;
  std::mutex m_mutex;
  std::unordered_map<std::string, std::unique_ptr<RedisNode>> m_nodes;  // by "host:port"; guarded by m_mutex
};

}  // namespace jitcache::daemon::remote
