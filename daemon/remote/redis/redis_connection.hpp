// One connection to one Redis node, through hiredis: connected with redisConnectWithTimeout, logged
// in (AUTH, SELECT) before first use, then used for one exchange at a time (commands sent
// pipelined, one reply read for each). hiredis formats the commands and parses the replies; the
// socket's reads and writes are ours, so that every one is bounded by the call's deadline
// (redisSetTimeout with the time left, before each system call) and the bytes of a reply by the
// caller's limit: a hostile or broken server cannot make it block past the deadline or allocate
// more than the limit.
//
// A connection whose exchange failed (timeout, a close, a reply that is not the protocol, a value
// over the limit left unread) is broken(): its owner discards it. A reply of the server's own
// (-ERR, MOVED, ...) is a reply, not a failure, and leaves the connection usable.
// Thread safety: one thread at a time (the pool hands it to one caller).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>
#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/redis/redis_reply.hpp>
#include <daemon/remote/redis/redis_settings.hpp>

struct redisContext;

namespace jitcache::daemon::remote {

// One command: its name and arguments, binary-safe. The views must outlive the exchange.
struct RedisCommand {
  std::vector<std::string_view> args;
};

// Rationale: every reply but a GET's value and CLUSTER SLOTS is a status, an integer or a short
// error (the longest, a MOVED to an IPv6 address, is under 100 bytes): 64 KiB is far beyond any
// honest one and small enough to read from anyone.
inline constexpr std::size_t k_small_reply_bytes = 64 * 1024;
// Rationale: CLUSTER SLOTS lists each range of slots with its nodes: at most 16384 ranges of
// about 100 bytes, for the most fragmented cluster with one replica each, under 4 MiB.
inline constexpr std::size_t k_cluster_slots_reply_bytes = 4 * 1024 * 1024;
// An array reply with more elements is refused before hiredis allocates it (the count comes
// first, as text). CLUSTER SLOTS of the most fragmented cluster has 16384.
inline constexpr int k_max_reply_elements = 65536;

struct ReplyLimit {
  std::size_t max_bytes = k_small_reply_bytes;  // all replies of one exchange together; more is corrupt
  // A single command's reply that is a bulk string longer than this is too_large, known from its
  // length line before the value is read.
  std::optional<std::size_t> max_bulk;
};

// Who the connection logs in as, and the database it selects.
struct RedisLogin {
  std::string user;      // empty: the default user
  std::string password;  // empty with no user: no AUTH
  int db = 0;
};

// AUTH [user] password, or nothing when the login has neither. The command views `login`.
std::optional<RedisCommand> auth_command(const RedisLogin& login);

class RedisConnection {
 public:
  // Connects, then sends AUTH and SELECT as `login` asks. unavailable: cannot connect; timeout:
  // the deadline passed; forbidden: AUTH refused; io, corrupt: as for exchange().
  static common::Result<std::unique_ptr<RedisConnection>> open(const RedisNodeAddress& address, const RedisLogin& login,
                                                               Deadline deadline);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends `commands` and reads one reply for each, by `deadline` and within `limit` (max_bulk with
  // one command only). timeout; io (a socket error or a close by the server); corrupt (not RESP, more
  // than the limit, extra bytes); too_large (a bulk over max_bulk).
  common::Result<std::vector<ReplyPtr>> exchange(std::span<const RedisCommand> commands, const ReplyLimit& limit,
                                                 Deadline deadline);

  bool broken() const { return m_broken; }
  // The last exchange failed because the server had closed the connection (a close or a reset
  // before any byte of a reply): what a server does to a connection idle for longer than its
  // `timeout`, or before a restart. The command may be sent again on a new connection.
  bool closed_before_reply() const { return m_closed_before_reply; }
  // "host:port", for messages.
  const std::string& node_name() const { return m_node_name; }

 private:
  RedisConnection(redisContext* context, std::string node_name);
  common::Result<void> arm_timeout(Deadline deadline, std::string_view what);
  common::Result<void> send_all(std::string_view bytes, Deadline deadline, std::string_view what);
  common::Error fail(common::ErrorCode code, std::string_view what, std::string_view why);
  common::Result<void> log_in(const RedisLogin& login, Deadline deadline);

  redisContext* m_context = nullptr;
  std::string m_node_name;
  std::unique_ptr<char[]> m_buffer;
  bool m_broken = false;
  bool m_closed_before_reply = false;
};

}  // namespace jitcache::daemon::remote
