#include <tests/bench/redis_connection.hpp>

#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <utility>

namespace jitcache::bench {

namespace {

using common::ErrorCode;
using common::make_error;

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

common::Error context_error(const redisContext* context, std::string_view what) {
  std::string message = std::string(what) + ": ";
  message += context != nullptr && context->err != 0 ? context->errstr : "no reply";
  return make_error(ErrorCode::io, std::move(message));
}

std::string_view reply_text(const redisReply& reply) {
  return std::string_view(reply.str != nullptr ? reply.str : "", reply.str != nullptr ? reply.len : 0);
}

}  // namespace

common::Result<RedisConnection> RedisConnection::connect(const std::string& socket_path) {
  redisContext* context = redisConnectUnix(socket_path.c_str());
  if (context == nullptr) return make_error(ErrorCode::io, "cannot allocate a hiredis context");
  if (context->err != 0) {
    auto error = context_error(context, "cannot connect to " + socket_path);
    redisFree(context);
    return error;
  }
  return RedisConnection(context);
}

RedisConnection::RedisConnection(RedisConnection&& other) noexcept
    : m_context(std::exchange(other.m_context, nullptr)) {}

RedisConnection& RedisConnection::operator=(RedisConnection&& other) noexcept {
  if (this != &other) {
    if (m_context != nullptr) redisFree(m_context);
    m_context = std::exchange(other.m_context, nullptr);
  }
  return *this;
}

RedisConnection::~RedisConnection() {
  if (m_context != nullptr) redisFree(m_context);
}

int RedisConnection::fd() const { return m_context != nullptr ? m_context->fd : -1; }

common::Result<void> RedisConnection::ping() {
  ReplyPtr reply(static_cast<redisReply*>(redisCommand(m_context, "PING")));
  if (!reply) return context_error(m_context, "PING");
  if (reply->type != REDIS_REPLY_STATUS || reply_text(*reply) != "PONG") {
    return make_error(ErrorCode::internal, "PING: unexpected reply");
  }
  return {};
}

common::Result<std::string> RedisConnection::server_version() {
  ReplyPtr reply(static_cast<redisReply*>(redisCommand(m_context, "INFO server")));
  if (!reply) return context_error(m_context, "INFO");
  if (reply->type != REDIS_REPLY_STRING) return make_error(ErrorCode::internal, "INFO: unexpected reply");
  constexpr std::string_view k_field = "redis_version:";
  const std::string_view info = reply_text(*reply);
  const auto start = info.find(k_field);
  if (start == std::string_view::npos) return make_error(ErrorCode::not_found, "INFO: no redis_version");
  const auto value = info.substr(start + k_field.size());
  return std::string(value.substr(0, value.find_first_of("\r\n")));
}

common::Result<void> RedisConnection::set(std::string_view key, proto::Bytes value) {
  ReplyPtr reply(static_cast<redisReply*>(
      redisCommand(m_context, "SET %b %b", key.data(), key.size(), value.data(), value.size())));
  if (!reply) return context_error(m_context, "SET");
  if (reply->type == REDIS_REPLY_ERROR) {
    return make_error(ErrorCode::internal, "SET: " + std::string(reply_text(*reply)));
  }
  return {};
}

common::Result<void> RedisConnection::get(std::string_view key, std::size_t expected_size) {
  ReplyPtr reply(static_cast<redisReply*>(redisCommand(m_context, "GET %b", key.data(), key.size())));
  if (!reply) return context_error(m_context, "GET");
  if (reply->type == REDIS_REPLY_NIL) return make_error(ErrorCode::not_found, "GET: no value for the key");
  if (reply->type != REDIS_REPLY_STRING) {
    return make_error(ErrorCode::internal, "GET: unexpected reply type " + std::to_string(reply->type));
  }
  if (static_cast<std::size_t>(reply->len) != expected_size) {
    return make_error(ErrorCode::corrupt,
                      "GET: " + std::to_string(reply->len) + " bytes instead of " + std::to_string(expected_size));
  }
  return {};
}

}  // namespace jitcache::bench
