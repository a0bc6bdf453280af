// The Redis backend of the fleet tier (daemon/remote/backend/remote_backend.hpp): a standalone
// Redis or a Redis Cluster, through hiredis 0.14, which has no Cluster support of its own, so the
// slot routing is this folder's (hash_slot.hpp, slot_map.hpp, cluster_router.cpp).
//
// Commands it sends (docs/remote-layout.md "Redis", for an operator's ACL): on each new connection
// AUTH (when a user or password is set) and SELECT (db != 0); GET for get, EXISTS for exists,
// SET key value [PX ttl] for put, SET key value NX [PX ttl] for put_if_absent, DEL for remove,
// EVAL of a script of GET and SET for renew_lease and of GET and DEL for release_lease (the compare
// and the change in one step), AUTH and PING on every node for ping; in a Cluster also CLUSTER
// SLOTS (the slot map) and ASKING (after an ASK redirection).
//
// A get reads no more of a value longer than max_bytes than its length line and the rest of the
// first 64 KiB read: the bulk reply's length comes first, so no STRLEN round trip is needed.
// Thread safety: as RemoteBackend; every method from any number of threads.
#pragma once

#include <memory>

#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/redis/redis_counters.hpp>
#include <daemon/remote/redis/redis_settings.hpp>

namespace jitcache::daemon::remote {

class RedisBackend : public RemoteBackend {
 public:
  // What it counted since it was made (redis_counters.hpp).
  virtual RedisCounters counters() const = 0;
  // counters() as redis.<name>: redis.moved, redis.asked, redis.slot_map_refreshes, ...
  std::vector<std::pair<std::string, std::uint64_t>> own_figures() const override;
  bool keeps_queues() const override { return true; }
};

// A backend for `settings` (parse_redis_url, with the password filled in). It connects on first
// use, not here: making it cannot fail. Settings with no node make a backend whose every call
// fails with invalid_argument.
std::unique_ptr<RedisBackend> make_redis_backend(RedisSettings settings);

}  // namespace jitcache::daemon::remote
