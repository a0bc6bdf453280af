#include <daemon/remote/redis/redis_node.hpp>

#include <utility>

#include <hiredis/hiredis.h>

namespace jitcache::daemon::remote {

namespace {

common::Result<std::vector<ReplyPtr>> exchange_on(RedisConnection& connection, std::span<const RedisCommand> commands,
                                                  const ReplyLimit& limit, Deadline deadline, bool asking) {
  if (asking) {
    static const RedisCommand k_asking{{"ASKING"}};
    JITCACHE_TRY_ASSIGN(auto asked, connection.exchange(std::span(&k_asking, 1), ReplyLimit{}, deadline));
    const redisReply& reply = *asked.front();
    if (is_error_reply(reply))
      return error_from_reply("redis " + connection.node_name() + ": ASKING", reply_text(reply));
    if (!is_status_reply(reply, "OK")) return unexpected_reply("redis " + connection.node_name() + ": ASKING", reply);
  }
  return connection.exchange(commands, limit, deadline);
}

}  // namespace

RedisNode::RedisNode(RedisNodeAddress address, RedisLogin login, std::size_t max_connections,
                     RedisCounterCells& counters)
    : m_name(to_string(address)),
      m_counters(counters),
      m_pool(std::move(address), std::move(login), max_connections, counters) {}

common::Result<std::vector<ReplyPtr>> RedisNode::run(std::span<const RedisCommand> commands, const ReplyLimit& limit,
                                                     Deadline deadline, bool asking) {
  JITCACHE_TRY_ASSIGN(auto lease, m_pool.acquire(deadline));
  auto replies = exchange_on(*lease, commands, limit, deadline, asking);
  if (replies || !lease.reused() || !lease->closed_before_reply()) return replies;
  // Rationale: a server closes connections idle longer than its `timeout` setting, and all of them
  // when it restarts; the command never reached it, so sending it again cannot do it twice.
  RedisCounterCells::add(m_counters.stale_retries);
  { [[maybe_unused]] auto stale = std::move(lease); }
  m_pool.close_idle();
  JITCACHE_TRY_ASSIGN(auto fresh, m_pool.acquire(deadline));
  return exchange_on(*fresh, commands, limit, deadline, asking);
}

NodeDirectory::NodeDirectory(RedisLogin login, std::size_t max_connections_per_node, RedisCounterCells& counters)
    : m_login(std::move(login)), m_max_connections(max_connections_per_node), m_counters(counters) {}

RedisNode* NodeDirectory::node(const RedisNodeAddress& address) {
  const std::string name = to_string(address);
  std::lock_guard lock(m_mutex);
  if (const auto found = m_nodes.find(name); found != m_nodes.end()) return found->second.get();
  if (m_nodes.size() >= k_max_nodes) return nullptr;
  auto made = std::make_unique<RedisNode>(address, m_login, m_max_connections, m_counters);
  RedisNode* node = made.get();
  m_nodes.emplace(name, std::move(made));
  return node;
}

}  // namespace jitcache::daemon::remote
