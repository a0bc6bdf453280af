// What an op's handler answers: a status, the reply payload, and an image sent after it (as bytes or
// as a descriptor). The connection (daemon/server/connection.cpp) writes it; nothing here knows of
// sockets.
// Thread safety: plain values; an image buffer is immutable and may be shared between replies.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include <common/result.hpp>
#include <daemon/store/store.hpp>
#include <proto/messages.hpp>

namespace jitcache::daemon::ops {

// Rationale: an image below this goes as bytes even when the request asks for a descriptor:
// streaming it costs less than a memfd and a mapping on each side (docs/benchmarks.md).
inline constexpr std::size_t k_min_image_by_descriptor = 64 << 10;

struct Reply {
  proto::Status status = proto::Status::ok;
  proto::Payload payload;  // the reply payload, or the error message when status is not ok
  // Sent right after `payload` (a LOOKUP hit's image, straight from the store's buffer, which the
  // store's hot image cache may share with other replies), or as a descriptor (below).
  std::shared_ptr<const store::ImageBuffer> image;
  // A LOOKUP hit to a request with proto::k_flag_image_fd whose image is worth a descriptor:
  // `payload` is then a LookupReplyByDescriptor and `image` goes as a sealed memfd
  // (daemon/server/connection.cpp); image_as_bytes() makes the reply that sends it as bytes instead.
  bool image_by_descriptor = false;
};

// `reply` (image_by_descriptor) as the reply that sends its image as bytes after the head, for when
// no descriptor can be made. Only on that rare path is a second head encoded.
Reply image_as_bytes(const Reply& reply);

// An error reply; also used by the connection for frames it refuses.
Reply error_reply(proto::Status status, std::string_view message);
// The reply status for a failed store or decode call (proto::status_for, proto/status_codes.hpp).
proto::Status status_for(const common::Error& error);

}  // namespace jitcache::daemon::ops
