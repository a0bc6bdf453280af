// A private Redis Cluster for tests: N masters (RedisServer with cluster_enabled, no replicas) on
// free ports of 127.0.0.1, joined by `redis-cli --cluster create`, ready when every node says
// cluster_state:ok. Master i serves the i-th contiguous share of the 16384 hash slots (redis-cli's
// order: with 3 masters, 0-5460, 5461-10922, 10923-16383) until reshard() moves some. Killed when
// the object dies. Thread safety: one owner calls the methods; reshard() may run in one thread
// while other threads send traffic to the nodes.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <tests/support/redis_server.hpp>

namespace jitcache::testing {

class RedisCluster {
 public:
  // Starts `masters` nodes with `node_options` (a password applies to every node and to the
  // redis-cli calls), creates the cluster and waits for it; throws std::runtime_error otherwise.
  explicit RedisCluster(std::size_t masters = 3, RedisServerOptions node_options = {});
  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;

  std::size_t size() const { return m_nodes.size(); }
  RedisServer& node(std::size_t index) { return *m_nodes.at(index); }
  const RedisServer& node(std::size_t index) const { return *m_nodes.at(index); }
  // "127.0.0.1:P1,127.0.0.1:P2,...", and the URL of them: "redis+cluster://127.0.0.1:P1,...".
  std::string seeds() const;
  std::string url() const { return "redis+cluster://" + seeds(); }
  // The node's cluster id (CLUSTER MYID).
  std::string node_id(std::size_t index) const;
  // The index of the master that serves `slot` now, as node 0 (or the first running node) sees it.
  std::size_t owner_of_slot(int slot) const;
  // The same for all 16384 slots at once (one CLUSTER NODES); size() for a slot no master serves.
  std::vector<std::size_t> slot_owners() const;

  // Moves `slots` hash slots, with their keys, from master `from` to master `to`
  // (`redis-cli --cluster reshard`: MIGRATING/IMPORTING, MIGRATE, SETSLOT NODE, one slot after
  // the other, so clients meet ASK and then MOVED); returns when done, throws when it fails.
  // `keys_per_migrate` is redis-cli's --cluster-pipeline: 1 moves a slot's keys one MIGRATE at a
  // time, so a slot with several keys is half moved for longer (more ASK redirections).
  void reshard(std::size_t from, std::size_t to, std::size_t slots, std::size_t keys_per_migrate = 10);

  // Waits until every running node says cluster_state:ok and assigns all 16384 slots; throws after
  // `timeout`.
  void wait_until_ok(std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;

 private:
  std::vector<std::string> auth_args() const;
  std::vector<std::unique_ptr<RedisServer>> m_nodes;
  std::string m_password;
};

}  // namespace jitcache::testing
