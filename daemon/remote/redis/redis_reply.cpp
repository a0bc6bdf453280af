#include <daemon/remote/redis/redis_reply.hpp>

#include <hiredis/hiredis.h>

namespace jitcache::daemon::remote {

namespace {

using common::ErrorCode;

std::string_view first_word(std::string_view text) { return text.substr(0, text.find(' ')); }

std::string_view type_name(int type) {
  switch (type) {
    case REDIS_REPLY_STRING: return "a bulk string";
    case REDIS_REPLY_ARRAY: return "an array";
    case REDIS_REPLY_INTEGER: return "an integer";
    case REDIS_REPLY_NIL: return "nil";
    case REDIS_REPLY_STATUS: return "a status";
    case REDIS_REPLY_ERROR: return "an error";
    default: return "a reply of unknown type";
  }
}

}  // namespace

void ReplyDeleter::operator()(redisReply* reply) const { freeReplyObject(reply); }

std::string_view reply_text(const redisReply& reply) {
  const bool has_text =
      reply.type == REDIS_REPLY_STRING || reply.type == REDIS_REPLY_STATUS || reply.type == REDIS_REPLY_ERROR;
  if (!has_text || reply.str == nullptr) return {};
  return std::string_view(reply.str, reply.len);
}

bool is_error_reply(const redisReply& reply) { return reply.type == REDIS_REPLY_ERROR; }

bool is_status_reply(const redisReply& reply, std::string_view text) {
  return reply.type == REDIS_REPLY_STATUS && reply_text(reply) == text;
}

std::string printable_excerpt(std::string_view text, std::size_t limit) {
  constexpr std::string_view k_hex = "0123456789abcdef";
  std::string out;
  for (const char c : text.substr(0, limit)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += k_hex[byte >> 4];
      out += k_hex[byte & 0xf];
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

common::Error error_from_reply(std::string_view where, std::string_view text) {
  const auto word = first_word(text);
  ErrorCode code = ErrorCode::io;
  if (word == "NOAUTH" || word == "WRONGPASS" || word == "NOPERM") {
    code = ErrorCode::forbidden;
  } else if (word == "LOADING" || word == "BUSY" || word == "MASTERDOWN") {
    code = ErrorCode::unavailable;
  } else if (word == "WRONGTYPE") {
    // The server is well; the key holds a list, hash, ... that nobody of the fleet wrote: a bad
    // value, which the tier rejects like one, not a sick server (docs/remote-layout.md "Checks on read").
    code = ErrorCode::invalid_argument;
  }
  return common::make_error(code, std::string(where) + ": the server answered -" + printable_excerpt(text));
}

common::Error unexpected_reply(std::string_view where, const redisReply& reply) {
  std::string message = std::string(where) + ": the server answered " + std::string(type_name(reply.type));
  if (const auto text = reply_text(reply); !text.empty()) message += " \"" + printable_excerpt(text, 60) + "\"";
  return common::make_error(ErrorCode::corrupt, std::move(message));
}

}  // namespace jitcache::daemon::remote
