#include <daemon/remote/redis/redis_connection.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include <hiredis/hiredis.h>

namespace jitcache::daemon::remote {

namespace {

using common::ErrorCode;
using common::make_error;

// Rationale: 64 KiB per read keeps the system calls for a multi-megabyte image in the hundreds
// while reading at most that much of a value it then refuses as too large.
constexpr std::size_t k_read_chunk = 64 * 1024;
// A bulk string's length line ("$<up to 20 digits>\r\n") fits in this.
constexpr std::size_t k_length_line_bytes = 24;
// Rationale: a socket timeout of 0 means "none" to the kernel; the last millisecond of a deadline
// is still a bounded wait.
constexpr auto k_min_socket_timeout = std::chrono::milliseconds(1);

// hiredis's own reply builders, with arrays over k_max_reply_elements refused: the reader then
// fails with "Out of memory", which we report as a corrupt reply.
const redisReplyObjectFunctions& default_reply_functions() {
  static const redisReplyObjectFunctions functions = [] {
    redisReader* reader = redisReaderCreate();
    const redisReplyObjectFunctions copy = *reader->fn;
    redisReaderFree(reader);
    return copy;
  }();
  return functions;
}

void* create_bounded_array(const redisReadTask* task, int elements) {
  if (elements < 0 || elements > k_max_reply_elements) return nullptr;
  return default_reply_functions().createArray(task, elements);
}

redisReplyObjectFunctions* bounded_reply_functions() {
  static redisReplyObjectFunctions functions = [] {
    redisReplyObjectFunctions bounded = default_reply_functions();
    bounded.createArray = create_bounded_array;
    return bounded;
  }();
  return &functions;
}

timeval to_timeval(Clock::duration left) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(std::max<Clock::duration>(left, k_min_socket_timeout));
  return timeval{static_cast<time_t>(micros.count() / 1'000'000), static_cast<suseconds_t>(micros.count() % 1'000'000)};
}

struct FormattedCommand {
  char* bytes = nullptr;
  ~FormattedCommand() {
    if (bytes != nullptr) redisFreeCommand(bytes);
  }
};

std::string command_label(std::span<const RedisCommand> commands) {
  std::string label;
  for (const auto& command : commands) {
    if (!label.empty()) label += '+';
    label += command.args.empty() ? std::string_view("?") : command.args.front();
  }
  return label;
}

// The length a bulk string's length line announces, or nullopt when `head` does not start with
// one (another type of reply, or not yet a whole line).
std::optional<long long> announced_bulk_length(std::string_view head) {
  const auto end = head.find("\r\n");
  if (head.empty() || head.front() != '$' || end == std::string_view::npos) return std::nullopt;
  long long length = 0;
  const auto digits = head.substr(1, end - 1);
  const auto [stop, error] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
  if (error != std::errc() || stop != digits.data() + digits.size()) return std::nullopt;
  return length;
}

}  // namespace

std::optional<RedisCommand> auth_command(const RedisLogin& login) {
  if (!login.user.empty()) return RedisCommand{{"AUTH", login.user, login.password}};
  if (!login.password.empty()) return RedisCommand{{"AUTH", login.password}};
  return std::nullopt;
}

RedisConnection::RedisConnection(redisContext* context, std::string node_name)
    : m_context(context), m_node_name(std::move(node_name)) {}

RedisConnection::~RedisConnection() { redisFree(m_context); }

common::Result<std::unique_ptr<RedisConnection>> RedisConnection::open(const RedisNodeAddress& address,
                                                                       const RedisLogin& login, Deadline deadline) {
  const std::string name = to_string(address);
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) {
    return make_error(ErrorCode::timeout, "redis " + name + ": the deadline passed before connecting");
  }
  errno = 0;
  redisContext* context = redisConnectWithTimeout(address.host.c_str(), address.port, to_timeval(left));
  const int connect_errno = errno;
  if (context == nullptr)
    return make_error(ErrorCode::internal, "redis " + name + ": hiredis has no memory for a context");
  std::unique_ptr<RedisConnection> connection(new RedisConnection(context, name));
  if (context->err != 0) {
    const bool timed_out = connect_errno == ETIMEDOUT || std::strcmp(context->errstr, std::strerror(ETIMEDOUT)) == 0 ||
                           Clock::now() >= deadline;
    return make_error(timed_out ? ErrorCode::timeout : ErrorCode::unavailable,
                      "redis " + name + ": cannot connect: " + printable_excerpt(context->errstr));
  }
  // Rationale: the daemon starts compile workers; they must not inherit its Redis sockets. (hiredis
  // 0.14 opens them without SOCK_CLOEXEC, so a fork in another thread at this moment still could.)
  ::fcntl(context->fd, F_SETFD, FD_CLOEXEC);
  context->reader->fn = bounded_reply_functions();
  connection->m_buffer = std::make_unique<char[]>(k_read_chunk);
  JITCACHE_TRY(connection->log_in(login, deadline));
  return connection;
}

common::Result<void> RedisConnection::log_in(const RedisLogin& login, Deadline deadline) {
  std::vector<RedisCommand> commands;
  const auto auth = auth_command(login);
  if (auth) commands.push_back(*auth);
  const std::string db = std::to_string(login.db);
  if (login.db != 0) commands.push_back(RedisCommand{{"SELECT", db}});
  if (commands.empty()) return {};
  JITCACHE_TRY_ASSIGN(auto replies, exchange(commands, ReplyLimit{}, deadline));
  for (std::size_t i = 0; i < replies.size(); ++i) {
    const bool is_auth = auth && i == 0;
    const std::string where = "redis " + m_node_name + ": " + (is_auth ? "AUTH" : "SELECT " + db);
    const redisReply& reply = *replies[i];
    if (is_error_reply(reply)) {
      auto error = error_from_reply(where, reply_text(reply));
      // Any refusal of AUTH is about our credentials, also the -ERR of a server with no password.
      if (is_auth) error.code = ErrorCode::forbidden;
      m_broken = true;
      return error;
    }
    if (!is_status_reply(reply, "OK")) {
      m_broken = true;
      return unexpected_reply(where, reply);
    }
  }
  return {};
}

common::Error RedisConnection::fail(ErrorCode code, std::string_view what, std::string_view why) {
  m_broken = true;
  return make_error(code, "redis " + m_node_name + ": " + std::string(what) + ": " + std::string(why));
}

common::Result<void> RedisConnection::arm_timeout(Deadline deadline, std::string_view what) {
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return fail(ErrorCode::timeout, what, "the deadline passed");
  if (redisSetTimeout(m_context, to_timeval(left)) != REDIS_OK) {
    return fail(ErrorCode::io, what, std::string("cannot set the socket timeout: ") + m_context->errstr);
  }
  return {};
}

common::Result<void> RedisConnection::send_all(std::string_view bytes, Deadline deadline, std::string_view what) {
  while (!bytes.empty()) {
    JITCACHE_TRY(arm_timeout(deadline, what));
    const ssize_t sent = ::send(m_context->fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    const int error = errno;
    if (sent < 0 && error == EINTR) continue;
    if (sent < 0 && (error == EAGAIN || error == EWOULDBLOCK)) {
      return fail(ErrorCode::timeout, what, "the server took no more bytes by the deadline");
    }
    if (sent < 0 && (error == EPIPE || error == ECONNRESET)) {
      m_closed_before_reply = true;
      return fail(ErrorCode::io, what, "the server closed the connection");
    }
    return fail(ErrorCode::io, what, std::string("send: ") + std::strerror(error));
  }
  return {};
}

common::Result<std::vector<ReplyPtr>> RedisConnection::exchange(std::span<const RedisCommand> commands,
                                                                const ReplyLimit& limit, Deadline deadline) {
  m_closed_before_reply = false;
  if (m_broken) return fail(ErrorCode::internal, command_label(commands), "the connection is broken");
  // Nothing sent yet: the connection stays usable for a caller with time left.
  if (Clock::now() >= deadline) {
    return make_error(ErrorCode::timeout,
                      "redis " + m_node_name + ": " + command_label(commands) + ": the deadline passed before sending");
  }
  for (const auto& command : commands) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto& arg : command.args) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    FormattedCommand formatted;
    const int length =
        redisFormatCommandArgv(&formatted.bytes, static_cast<int>(argv.size()), argv.data(), lengths.data());
    if (length < 0) return fail(ErrorCode::internal, command_label(commands), "hiredis cannot format the command");
    JITCACHE_TRY(send_all(std::string_view(formatted.bytes, static_cast<std::size_t>(length)), deadline,
                          command.args.empty() ? std::string_view("?") : command.args.front()));
  }

  redisReader* reader = m_context->reader;
  std::vector<ReplyPtr> replies;
  replies.reserve(commands.size());
  std::size_t received = 0;
  // The first bytes of a lone command's reply, until they show whether it is a bulk string over
  // max_bulk.
  std::string head;
  bool bulk_checked = !limit.max_bulk || commands.size() != 1;
  while (replies.size() < commands.size()) {
    void* reply = nullptr;
    if (redisReaderGetReply(reader, &reply) != REDIS_OK) {
      const std::string why = reader->err == REDIS_ERR_OOM
                                  ? "a reply of more than " + std::to_string(k_max_reply_elements) + " elements"
                                  : std::string("not the Redis protocol: ") + printable_excerpt(reader->errstr);
      return fail(ErrorCode::corrupt, command_label(commands), why);
    }
    if (reply != nullptr) {
      replies.emplace_back(static_cast<redisReply*>(reply));
      continue;
    }
    JITCACHE_TRY(arm_timeout(deadline, command_label(commands)));
    const ssize_t got = ::recv(m_context->fd, m_buffer.get(), k_read_chunk, 0);
    if (got == 0 || (got < 0 && errno == ECONNRESET)) {
      m_closed_before_reply = received == 0;
      return fail(ErrorCode::io, command_label(commands),
                  "the server closed the connection after " + std::to_string(received) + " bytes of the reply");
    }
    if (got < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      if (error == EAGAIN || error == EWOULDBLOCK) {
        return fail(ErrorCode::timeout, command_label(commands),
                    "no whole reply by the deadline (" + std::to_string(received) + " bytes came)");
      }
      return fail(ErrorCode::io, command_label(commands), std::string("recv: ") + std::strerror(error));
    }
    const auto bytes = std::string_view(m_buffer.get(), static_cast<std::size_t>(got));
    received += bytes.size();
    if (!bulk_checked) {
      head.append(bytes.substr(0, k_length_line_bytes - std::min(head.size(), k_length_line_bytes)));
      if (const auto length = announced_bulk_length(head)) {
        bulk_checked = true;
        if (*length > 0 && static_cast<unsigned long long>(*length) > *limit.max_bulk) {
          return fail(ErrorCode::too_large, command_label(commands),
                      "the value is " + std::to_string(*length) + " bytes, more than the " +
                          std::to_string(*limit.max_bulk) + " asked for");
        }
      } else if (head.size() >= k_length_line_bytes || head.find("\r\n") != std::string::npos) {
        bulk_checked = true;  // not a bulk string: the reader judges it
      }
    }
    if (received > limit.max_bytes) {
      return fail(ErrorCode::corrupt, command_label(commands),
                  "a reply longer than " + std::to_string(limit.max_bytes) + " bytes");
    }
    if (redisReaderFeed(reader, bytes.data(), bytes.size()) != REDIS_OK) {
      return fail(ErrorCode::internal, command_label(commands), "hiredis cannot buffer the reply");
    }
  }
  if (reader->len > reader->pos) {
    return fail(ErrorCode::corrupt, command_label(commands), "the server sent more than the replies asked for");
  }
  return replies;
}

}  // namespace jitcache::daemon::remote
