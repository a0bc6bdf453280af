#include <daemon/ops/reply.hpp>

#include <daemon/ops/op_replies.hpp>

#include <string>

#include <spdlog/spdlog.h>

#include <proto/status_codes.hpp>

namespace jitcache::daemon::ops {

using proto::Status;

Reply error_reply(Status status, std::string_view message) {
  return Reply{status, proto::encode_error_message(message), nullptr, false};
}

Reply image_as_bytes(const Reply& reply) {
  if (!reply.image_by_descriptor) return reply;
  auto head = proto::decode_lookup_reply_by_descriptor(proto::Bytes(reply.payload));
  if (!head)
    return error_reply(Status::internal, "a LOOKUP reply by descriptor that does not decode: " + head.error().message);
  return Reply{reply.status, proto::encode_lookup_reply_head(head->info, static_cast<std::uint32_t>(head->image_size)),
               reply.image, false};
}

Status status_for(const common::Error& error) { return proto::status_for(error.code); }

Reply failure(const common::Error& error, std::string_view context) {
  const Status status = status_for(error);
  if (status == Status::internal) spdlog::error("{}: {}", context, error.message);
  if (status == Status::no_space) spdlog::warn("{}: the disk is full: {}", context, error.message);
  return error_reply(status, error.message);
}

}  // namespace jitcache::daemon::ops
