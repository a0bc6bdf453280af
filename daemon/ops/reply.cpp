#include <daemon/ops/reply.hpp>

#include <string>

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

}  // namespace jitcache::daemon::ops
