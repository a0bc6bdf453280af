#include <daemon/remote/redis/redis_backend.hpp>

#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <hiredis/hiredis.h>

#include <daemon/remote/redis/command_router.hpp>
#include <daemon/remote/redis/hash_slot.hpp>
#include <daemon/remote/redis/redis_connection.hpp>
#include <daemon/remote/redis/redis_key.hpp>
#include <daemon/remote/redis/redis_node.hpp>
#include <daemon/remote/redis/redis_reply.hpp>

namespace jitcache::daemon::remote {

namespace {

using common::ErrorCode;
using common::make_error;

std::string where(const RoutedReply& routed, std::string_view command) {
  return "redis " + routed.node->name() + ": " + std::string(command);
}

// Rationale: a lease is compared with the caller's value and changed in one step on the server, or
// a lease that expires between a GET and a SET (or DEL) and is taken by another host meanwhile is
// overwritten (or deleted). A script runs atomically; its one key is KEYS[1], so a Cluster serves it
// from the key's slot and redirects it (MOVED, ASK) as any command of one key. ARGV: the caller's
// value, then for a renewal the new value and the ttl in ms ("0": none, as put).
constexpr std::string_view k_renew_lease_script =
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end "
    "if ARGV[3] == '0' then redis.call('SET', KEYS[1], ARGV[2]) "
    "else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end "
    "return 1";
constexpr std::string_view k_release_lease_script =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
    "return 0";

class RedisBackendImpl final : public RedisBackend {
 public:
  explicit RedisBackendImpl(RedisSettings settings)
      : m_settings(std::move(settings)),
        m_name(redis_url_name(m_settings)),
        m_login{m_settings.user, m_settings.password,
                m_settings.mode == RedisSettings::Mode::standalone ? m_settings.db : 0},
        m_nodes(m_login, m_settings.max_connections_per_node, m_counters) {
    if (m_settings.nodes.empty()) return;
    m_router = m_settings.mode == RedisSettings::Mode::cluster ? make_cluster_router(m_settings, m_nodes, m_counters)
                                                               : make_standalone_router(m_settings, m_nodes);
  }

  std::string name() const override { return m_name; }
  RedisCounters counters() const override { return m_counters.snapshot(); }

  common::Result<std::optional<std::string>> get(RemoteKey key, std::size_t max_bytes, Deadline deadline) override {
    JITCACHE_TRY_ASSIGN(const std::string name, redis_key_name(m_settings.key_prefix, key));
    // Room for the length line and for an error reply (a redirection) beside the value itself.
    const std::size_t room = std::numeric_limits<std::size_t>::max() - k_small_reply_bytes;
    const ReplyLimit limit{max_bytes > room ? std::numeric_limits<std::size_t>::max() : max_bytes + k_small_reply_bytes,
                           max_bytes};
    JITCACHE_TRY_ASSIGN(auto routed, run(name, RedisCommand{{"GET", name}}, limit, deadline, "GET"));
    const redisReply& reply = *routed.reply;
    if (reply.type == REDIS_REPLY_NIL) return std::optional<std::string>();
    if (reply.type != REDIS_REPLY_STRING) return unexpected_reply(where(routed, "GET"), reply);
    if (reply.len > max_bytes) {
      return make_error(ErrorCode::too_large, where(routed, "GET") + ": the value is more than the " +
                                                  std::to_string(max_bytes) + " bytes asked for");
    }
    return std::optional<std::string>(std::string(reply.str, reply.len));
  }

  common::Result<bool> exists(RemoteKey key, Deadline deadline) override {
    JITCACHE_TRY_ASSIGN(const std::string name, redis_key_name(m_settings.key_prefix, key));
    JITCACHE_TRY_ASSIGN(auto routed, run(name, RedisCommand{{"EXISTS", name}}, ReplyLimit{}, deadline, "EXISTS"));
    const redisReply& reply = *routed.reply;
    if (reply.type != REDIS_REPLY_INTEGER || reply.integer < 0 || reply.integer > 1) {
      return unexpected_reply(where(routed, "EXISTS"), reply);
    }
    return reply.integer == 1;
  }

  common::Result<void> put(RemoteKey key, std::string_view value, std::chrono::milliseconds ttl,
                           Deadline deadline) override {
    JITCACHE_TRY_ASSIGN(const std::string name, redis_key_name(m_settings.key_prefix, key));
    JITCACHE_TRY(check_ttl(ttl));
    const std::string ttl_text = std::to_string(ttl.count());
    RedisCommand command{{"SET", name, value}};
    if (ttl.count() > 0) command.args.insert(command.args.end(), {"PX", ttl_text});
    JITCACHE_TRY_ASSIGN(auto routed, run(name, command, ReplyLimit{}, deadline, "SET"));
    if (!is_status_reply(*routed.reply, "OK")) return unexpected_reply(where(routed, "SET"), *routed.reply);
    return {};
  }

  common::Result<bool> put_if_absent(RemoteKey key, std::string_view value, std::chrono::milliseconds ttl,
                                     Deadline deadline) override {
    JITCACHE_TRY_ASSIGN(const std::string name, redis_key_name(m_settings.key_prefix, key));
    JITCACHE_TRY(check_ttl(ttl));
    const std::string ttl_text = std::to_string(ttl.count());
    RedisCommand command{{"SET", name, value, "NX"}};
    if (ttl.count() > 0) command.args.insert(command.args.end(), {"PX", ttl_text});
    JITCACHE_TRY_ASSIGN(auto routed, run(name, command, ReplyLimit{}, deadline, "SET NX"));
    const redisReply& reply = *routed.reply;
    if (reply.type == REDIS_REPLY_NIL) return false;
    if (!is_status_reply(reply, "OK")) return unexpected_reply(where(routed, "SET NX"), reply);
    return true;
  }

  common::Result<void> remove(RemoteKey key, Deadline deadline) override {
    JITCACHE_TRY_ASSIGN(const std::string name, redis_key_name(m_settings.key_prefix, key));
    JITCACHE_TRY_ASSIGN(auto routed, run(name, RedisCommand{{"DEL", name}}, ReplyLimit{}, deadline, "DEL"));
    if (routed.reply->type != REDIS_REPLY_INTEGER) return unexpected_reply(where(routed, "DEL"), *routed.reply);
    return {};
  }

  common::Result<LeaseChange> renew_lease(RemoteKey key, std::string_view current, std::string_view renewed,
                                          std::chrono::milliseconds ttl, Deadline deadline) override {
    JITCACHE_TRY_ASSIGN(const std::string name, redis_key_name(m_settings.key_prefix, key));
    JITCACHE_TRY(check_ttl(ttl));
    const std::string ttl_text = std::to_string(ttl.count());
    const RedisCommand command{{"EVAL", k_renew_lease_script, "1", name, current, renewed, ttl_text}};
    return run_lease_script(name, command, deadline, "EVAL (lease renewal)");
  }

  common::Result<LeaseChange> release_lease(RemoteKey key, std::string_view current, Deadline deadline) override {
    JITCACHE_TRY_ASSIGN(const std::string name, redis_key_name(m_settings.key_prefix, key));
    const RedisCommand command{{"EVAL", k_release_lease_script, "1", name, current}};
    return run_lease_script(name, command, deadline, "EVAL (lease release)");
  }

  common::Result<void> append(RemoteKey key, std::string_view value, std::size_t max_items,
                              Deadline deadline) override {
    JITCACHE_TRY_ASSIGN(const std::string name, redis_key_name(m_settings.key_prefix, key));
    JITCACHE_TRY_ASSIGN(auto routed, run(name, RedisCommand{{"RPUSH", name, value}}, ReplyLimit{}, deadline, "RPUSH"));
    const redisReply& reply = *routed.reply;
    if (reply.type != REDIS_REPLY_INTEGER) return unexpected_reply(where(routed, "RPUSH"), reply);
    if (static_cast<unsigned long long>(reply.integer) <= max_items) return {};
    const std::string first = "-" + std::to_string(max_items);
    JITCACHE_TRY_ASSIGN(auto trimmed,
                        run(name, RedisCommand{{"LTRIM", name, first, "-1"}}, ReplyLimit{}, deadline, "LTRIM"));
    if (!is_status_reply(*trimmed.reply, "OK")) return unexpected_reply(where(trimmed, "LTRIM"), *trimmed.reply);
    return {};
  }

  common::Result<std::optional<std::string>> take_first(RemoteKey key, std::size_t max_bytes,
                                                        Deadline deadline) override {
    JITCACHE_TRY_ASSIGN(const std::string name, redis_key_name(m_settings.key_prefix, key));
    const ReplyLimit limit{max_bytes + k_small_reply_bytes, max_bytes};
    JITCACHE_TRY_ASSIGN(auto routed, run(name, RedisCommand{{"LPOP", name}}, limit, deadline, "LPOP"));
    const redisReply& reply = *routed.reply;
    if (reply.type == REDIS_REPLY_NIL) return std::optional<std::string>();
    if (reply.type != REDIS_REPLY_STRING) return unexpected_reply(where(routed, "LPOP"), reply);
    if (reply.len > max_bytes) return make_error(ErrorCode::too_large, where(routed, "LPOP") + ": a value too long");
    return std::optional<std::string>(std::string(reply.str, reply.len));
  }

  common::Result<void> ping(Deadline deadline) override {
    if (!m_router) return no_nodes();
    JITCACHE_TRY_ASSIGN(auto nodes, m_router->serving_nodes(deadline));
    std::vector<RedisCommand> commands;
    // AUTH again, not only on a new connection: a password changed on the server since must show.
    if (auto auth = auth_command(m_login)) commands.push_back(std::move(*auth));
    commands.push_back(RedisCommand{{"PING"}});
    for (RedisNode* node : nodes) {
      JITCACHE_TRY_ASSIGN(auto replies, node->run(commands, ReplyLimit{}, deadline));
      for (std::size_t i = 0; i < replies.size(); ++i) {
        const bool is_auth = i + 1 < replies.size();
        const std::string what = "redis " + node->name() + (is_auth ? ": AUTH" : ": PING");
        const redisReply& reply = *replies[i];
        if (is_error_reply(reply)) {
          auto error = error_from_reply(what, reply_text(reply));
          if (is_auth) error.code = ErrorCode::forbidden;
          return error;
        }
        if (!is_status_reply(reply, is_auth ? "OK" : "PONG")) return unexpected_reply(what, reply);
      }
    }
    return {};
  }

 private:
  static common::Error no_nodes() {
    return make_error(ErrorCode::invalid_argument, "redis: the settings name no server");
  }

  static common::Result<void> check_ttl(std::chrono::milliseconds ttl) {
    if (ttl.count() < 0) return make_error(ErrorCode::invalid_argument, "redis: a negative ttl");
    return {};
  }

  // A lease script's answer: 1, it changed the lease; 0, the lease was not the caller's. A server
  // without EVAL (renamed away by its operator, or a Redis-like server without scripts) answers
  // "unknown command": unsupported, which the tier takes as "use two steps", not as a failure.
  common::Result<LeaseChange> run_lease_script(std::string_view key, const RedisCommand& command, Deadline deadline,
                                               std::string_view label) {
    auto ran = run(key, command, ReplyLimit{}, deadline, label);
    if (!ran) {
      common::Error error = std::move(ran).error();
      if (error.code == ErrorCode::io && error.message.find("answered -ERR unknown command") != std::string::npos) {
        error.code = ErrorCode::unsupported;
      }
      return error;
    }
    const RoutedReply routed = std::move(ran).value();
    const redisReply& reply = *routed.reply;
    if (reply.type != REDIS_REPLY_INTEGER || reply.integer < 0 || reply.integer > 1) {
      return unexpected_reply(where(routed, label), reply);
    }
    return reply.integer == 1 ? LeaseChange::done : LeaseChange::lost;
  }

  // The reply to `command` about `key`; a server's error reply becomes its Error.
  common::Result<RoutedReply> run(std::string_view key, const RedisCommand& command, const ReplyLimit& limit,
                                  Deadline deadline, std::string_view label) {
    if (!m_router) return no_nodes();
    JITCACHE_TRY_ASSIGN(auto routed, m_router->execute(key_hash_slot(key), command, limit, deadline));
    if (is_error_reply(*routed.reply)) return error_from_reply(where(routed, label), reply_text(*routed.reply));
    return routed;
  }

  const RedisSettings m_settings;
  const std::string m_name;
  const RedisLogin m_login;
  RedisCounterCells m_counters;
  NodeDirectory m_nodes;
  std::unique_ptr<CommandRouter> m_router;
};

}  // namespace

std::vector<std::pair<std::string, std::uint64_t>> RedisBackend::own_figures() const {
  const RedisCounters c = counters();
  return {{"redis.connections_opened", c.connections_opened},
          {"redis.connections_discarded", c.connections_discarded},
          {"redis.stale_retries", c.stale_retries},
          {"redis.pool_waits", c.pool_waits},
          {"redis.moved", c.moved},
          {"redis.asked", c.asked},
          {"redis.cluster_busy_retries", c.cluster_busy_retries},
          {"redis.slot_map_refreshes", c.slot_map_refreshes}};
}

std::unique_ptr<RedisBackend> make_redis_backend(RedisSettings settings) {
  return std::make_unique<RedisBackendImpl>(std::move(settings));
}

}  // namespace jitcache::daemon::remote
