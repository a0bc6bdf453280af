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

std::unique_ptr<RedisBackend> make_redis_backend(RedisSettings settings) {
  return std::make_unique<RedisBackendImpl>(std::move(settings));
}

}  // namespace jitcache::daemon::remote
