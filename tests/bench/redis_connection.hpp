// One synchronous hiredis connection to redis-server over its Unix socket: the Redis side of the
// LOOKUP comparison, the way a plain key-value client would fetch an image.
// Thread safety: one object per thread; move-only.
#pragma once

#include <string>
#include <string_view>

#include <common/result.hpp>
#include <proto/digest.hpp>

struct redisContext;

namespace jitcache::bench {

class RedisConnection {
 public:
  static common::Result<RedisConnection> connect(const std::string& socket_path);

  RedisConnection(RedisConnection&& other) noexcept;
  RedisConnection& operator=(RedisConnection&& other) noexcept;
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;
  ~RedisConnection();

  common::Result<void> ping();
  // The redis_version line of INFO server, for the record printed with the figures.
  common::Result<std::string> server_version();
  common::Result<void> set(std::string_view key, proto::Bytes value);
  // GET that succeeds only when the value exists and has `expected_size` bytes.
  common::Result<void> get(std::string_view key, std::size_t expected_size);

  int fd() const;

 private:
  explicit RedisConnection(redisContext* context) : m_context(context) {}

  redisContext* m_context = nullptr;
};

}  // namespace jitcache::bench
