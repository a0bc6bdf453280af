#include <daemon/remote/redis/command_router.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>

#include <hiredis/hiredis.h>

#include <daemon/remote/redis/cluster_topology.hpp>
#include <daemon/remote/redis/hash_slot.hpp>
#include <daemon/remote/redis/slot_map.hpp>

namespace jitcache::daemon::remote {

namespace {

using common::ErrorCode;
using common::make_error;

// Rationale: a key's slot moves once per reshard step, so an honest cluster redirects a command
// once, twice while a slot migrates (ASK, then MOVED after it moved); more than 5 means nodes that
// disagree, and the call fails rather than bounce until its deadline.
constexpr int k_max_redirects = 5;
// Rationale: TRYAGAIN lasts while a slot's keys are being moved, CLUSTERDOWN while a failover
// elects a master (about the cluster-node-timeout); start small, back off to at most 100 ms.
constexpr auto k_first_busy_pause = std::chrono::milliseconds(10);
constexpr auto k_max_busy_pause = std::chrono::milliseconds(100);
// Rationale: during a reshard every moved slot answers MOVED once per client; the MOVED slot is
// fixed in the map at once, and the whole map is fetched again at most this often for it.
constexpr auto k_moved_refresh_interval = std::chrono::milliseconds(200);

const RedisCommand k_cluster_slots{{"CLUSTER", "SLOTS"}};

class ClusterRouter final : public CommandRouter {
 public:
  ClusterRouter(const RedisSettings& settings, NodeDirectory& nodes, RedisCounterCells& counters)
      : m_nodes(nodes), m_counters(counters) {
    for (const auto& seed : settings.nodes) {
      RedisNode* node = m_nodes.node(seed);
      if (node != nullptr && std::find(m_seeds.begin(), m_seeds.end(), node) == m_seeds.end()) m_seeds.push_back(node);
    }
  }

  common::Result<RoutedReply> execute(int slot, const RedisCommand& command, const ReplyLimit& limit,
                                      Deadline deadline) override;
  common::Result<std::vector<RedisNode*>> serving_nodes(Deadline deadline) override;

 private:
  common::Result<void> ensure_map(Deadline deadline);
  // Fetches CLUSTER SLOTS from a known node, `avoid` last, unless the map was replaced since
  // `seen_epoch` (another thread did it).
  common::Result<void> refresh(std::uint64_t seen_epoch, const RedisNode* avoid, Deadline deadline);
  common::Result<void> fetch_from(RedisNode& node, Deadline deadline);
  RedisNode* route(int slot) const;

  NodeDirectory& m_nodes;
  RedisCounterCells& m_counters;
  std::vector<RedisNode*> m_seeds;
  SlotMap m_map;
  std::timed_mutex m_refreshing;
  Clock::time_point m_last_refresh{};  // guarded by m_refreshing
};

RedisNode* ClusterRouter::route(int slot) const {
  if (RedisNode* owner = m_map.owner(slot)) return owner;
  // No node known for the slot: any node answers with a MOVED to the one that serves it.
  const auto masters = m_map.masters();
  if (!masters.empty()) return masters.front();
  return m_seeds.empty() ? nullptr : m_seeds.front();
}

common::Result<void> ClusterRouter::ensure_map(Deadline deadline) {
  if (m_map.epoch() != 0) return {};
  return refresh(0, nullptr, deadline);
}

common::Result<void> ClusterRouter::fetch_from(RedisNode& node, Deadline deadline) {
  JITCACHE_TRY_ASSIGN(auto replies,
                      node.run(std::span(&k_cluster_slots, 1), ReplyLimit{k_cluster_slots_reply_bytes, {}}, deadline));
  const redisReply& reply = *replies.front();
  const std::string where = "redis " + node.name() + ": CLUSTER SLOTS";
  if (is_error_reply(reply)) {
    if (reply_text(reply).find("cluster support disabled") != std::string_view::npos) {
      return make_error(ErrorCode::io, where + ": not a Redis Cluster node: name the remote redis://host:port");
    }
    return error_from_reply(where, reply_text(reply));
  }
  auto ranges = parse_cluster_slots(reply, node.address().host);
  if (!ranges) return make_error(ErrorCode::corrupt, "redis " + node.name() + ": " + ranges.error().message);
  auto table = std::make_unique<SlotMap::Table>();  // 128 KiB: not on a daemon thread's stack
  table->fill(nullptr);
  for (const auto& range : *ranges) {
    RedisNode* master = m_nodes.node(range.master);
    if (master == nullptr) return make_error(ErrorCode::corrupt, where + ": more nodes than a cluster has");
    std::fill(table->begin() + range.first, table->begin() + range.last + 1, master);
  }
  m_map.replace(*table);
  RedisCounterCells::add(m_counters.slot_map_refreshes);
  return {};
}

common::Result<void> ClusterRouter::refresh(std::uint64_t seen_epoch, const RedisNode* avoid, Deadline deadline) {
  std::unique_lock lock(m_refreshing, std::defer_lock);
  if (!lock.try_lock_until(deadline)) {
    return make_error(ErrorCode::timeout, "redis cluster: the slot map was still being fetched at the deadline");
  }
  if (m_map.epoch() != seen_epoch) return {};
  std::vector<RedisNode*> candidates = m_map.masters();
  for (RedisNode* seed : m_seeds) {
    if (std::find(candidates.begin(), candidates.end(), seed) == candidates.end()) candidates.push_back(seed);
  }
  std::stable_partition(candidates.begin(), candidates.end(), [avoid](const RedisNode* node) { return node != avoid; });
  common::Error last = make_error(ErrorCode::unavailable, "redis cluster: no node to ask for the slot map");
  for (RedisNode* node : candidates) {
    if (Clock::now() >= deadline) break;
    auto fetched = fetch_from(*node, deadline);
    if (fetched) {
      m_last_refresh = Clock::now();
      return {};
    }
    last = std::move(fetched).error();
    // Credentials refused or a node that is no cluster node: every node would say the same.
    if (last.code == ErrorCode::forbidden || last.message.find("not a Redis Cluster node") != std::string::npos) break;
  }
  return last;
}

common::Result<std::vector<RedisNode*>> ClusterRouter::serving_nodes(Deadline deadline) {
  JITCACHE_TRY(ensure_map(deadline));
  auto masters = m_map.masters();
  if (masters.empty()) return make_error(ErrorCode::unavailable, "redis cluster: CLUSTER SLOTS names no master");
  return masters;
}

common::Result<RoutedReply> ClusterRouter::execute(int slot, const RedisCommand& command, const ReplyLimit& limit,
                                                   Deadline deadline) {
  JITCACHE_TRY(ensure_map(deadline));
  RedisNode* target = route(slot);
  if (target == nullptr) return make_error(ErrorCode::unavailable, "redis cluster: no node is known");
  bool asking = false;
  bool refreshed_after_failure = false;
  int redirects = 0;
  auto pause = k_first_busy_pause;
  for (;;) {
    const auto epoch = m_map.epoch();
    auto replies = target->run(std::span(&command, 1), limit, deadline, asking);
    asking = false;
    if (!replies) {
      // A node that cannot be reached may have been replaced (a failover): ask the others once.
      const auto code = replies.error().code;
      if ((code == ErrorCode::unavailable || code == ErrorCode::io) && !refreshed_after_failure) {
        refreshed_after_failure = true;
        if (refresh(epoch, target, deadline)) {
          if (RedisNode* now = route(slot); now != target) {
            target = now;
            continue;
          }
        }
      }
      return std::move(replies).error();
    }
    ReplyPtr reply = std::move(replies.value().front());
    if (!is_error_reply(*reply)) return RoutedReply{std::move(reply), target};

    const auto text = reply_text(*reply);
    if (auto redirect = parse_cluster_redirect(text, target->address().host)) {
      if (++redirects > k_max_redirects) {
        return make_error(ErrorCode::io, "redis cluster: more than " + std::to_string(k_max_redirects) +
                                             " redirections for slot " + std::to_string(slot) + ", the last -" +
                                             printable_excerpt(text, 80));
      }
      RedisNode* next = m_nodes.node(redirect->target);
      if (next == nullptr)
        return make_error(ErrorCode::corrupt, "redis cluster: redirected to more nodes than a cluster has");
      if (redirect->kind == ClusterRedirect::Kind::moved) {
        RedisCounterCells::add(m_counters.moved);
        bool due = false;
        {
          std::unique_lock lock(m_refreshing, std::try_to_lock);
          due = lock.owns_lock() && Clock::now() - m_last_refresh >= k_moved_refresh_interval;
        }
        // The refresh is a hint: the MOVED itself says where the slot is now.
        if (due) static_cast<void>(refresh(epoch, nullptr, deadline));
        m_map.assign(redirect->slot, next);
      } else {
        RedisCounterCells::add(m_counters.asked);
        asking = true;  // this once, on that node; the map stays as it is
      }
      target = next;
      continue;
    }
    if (text.starts_with("TRYAGAIN") || text.starts_with("CLUSTERDOWN")) {
      if (Clock::now() + pause < deadline) {
        RedisCounterCells::add(m_counters.cluster_busy_retries);
        std::this_thread::sleep_for(pause);
        pause = std::min<std::chrono::milliseconds>(pause * 2, k_max_busy_pause);
        continue;
      }
    }
    return RoutedReply{std::move(reply), target};
  }
}

}  // namespace

std::unique_ptr<CommandRouter> make_cluster_router(const RedisSettings& settings, NodeDirectory& nodes,
                                                   RedisCounterCells& counters) {
  return std::make_unique<ClusterRouter>(settings, nodes, counters);
}

}  // namespace jitcache::daemon::remote
