// hiredis replies as the backend handles them: owned (ReplyPtr), read as text, and turned into
// common::Error by what the server said (docs: daemon/remote/backend/remote_backend.hpp "Errors").
// Text from the server goes into messages only cut short and with its unprintable bytes escaped:
// a hostile server must not write escape sequences into the daemon's log.
// Thread safety: pure functions; a reply belongs to one thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <common/result.hpp>

struct redisReply;

namespace jitcache::daemon::remote {

struct ReplyDeleter {
  void operator()(redisReply* reply) const;
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

// The bytes of a string, status or error reply (empty for other types).
std::string_view reply_text(const redisReply& reply);

bool is_error_reply(const redisReply& reply);
bool is_status_reply(const redisReply& reply, std::string_view text);

// At most `limit` bytes of `text`, with bytes outside printable ASCII written as \xNN.
std::string printable_excerpt(std::string_view text, std::size_t limit = 200);

// The Error for an error reply's text, prefixed with `where` ("redis 10.0.0.5:6379: GET"):
// NOAUTH, WRONGPASS and NOPERM are forbidden (our credentials or the ACL refused us); LOADING,
// BUSY and MASTERDOWN unavailable (the server is not ready to serve); everything else, -ERR
// included, io.
common::Error error_from_reply(std::string_view where, std::string_view text);

// corrupt: `where` got a reply of another type than the command answers with.
common::Error unexpected_reply(std::string_view where, const redisReply& reply);

}  // namespace jitcache::daemon::remote
