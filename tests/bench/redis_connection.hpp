// One synchronous hiredis connection to redis-server over its Unix socket: the Redis side of the
// LOOKUP comparison, the way a plain key-value client would fetch an image.
// Thread safety: one object per thread; move-only.
#pragma once

#include <string>
#include <string_view>

#include <jitcache/proto/digest.hpp>
#include <jitcache/proto/result.hpp>

struct redisContext;

namespace jitcache::bench {

class RedisConnection {
 public:
  static proto::Result<RedisConnection> connect(const std::string& socket_path);

  RedisConnection(RedisConnection&& other) noexcept;
  RedisConnection& operator=(RedisConnection&& other) noexcept;
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;
  ~RedisConnection();

  proto::Result<void> ping();
  // The redis_version line of INFO server, for the record printed with the figures.
  proto::Result<std::string> server_version();
  proto::Result<void> set(std::string_view key, proto::Bytes value);
  // GET that succeeds only when the value exists and has `expected_size` bytes.
  proto::Result<void> get(std::string_view key, std::size_t expected_size);

  int fd() const;

 private:
  explicit RedisConnection(redisContext* context) : m_context(context) {}

  redisContext* m_context = nullptr;
};

}  // namespace jitcache::bench
