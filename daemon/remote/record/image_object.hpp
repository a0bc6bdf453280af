// The image object: a compiled image as a remote holds it in space "img", named by the SHA-256 of
// its raw bytes and compressed with zstd (docs/remote-layout.md "Image object").
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <proto/digest.hpp>

#include <daemon/remote/record/index_record.hpp>
#include <daemon/remote/record/rejection.hpp>

namespace jitcache::daemon::remote {

proto::Digest256 image_digest(proto::Bytes raw);  // SHA-256
// One zstd frame of `raw` (level 3, its content size recorded); empty only when zstd cannot
// allocate its context, an object no record can name (object_size is never 0).
std::string encode_image_object(proto::Bytes raw);

// The raw image, when `object` is what `record` names (docs/remote-layout.md "Checks on read",
// steps 7 to 10): one whole zstd frame that records its content size, nothing after it
// (image_corrupt); that content size is record.image_size and the object's length
// record.object_size (image_mismatch); it decompresses (image_corrupt) into a buffer of exactly
// image_size bytes, allocated only once all of that holds, so no frame makes it allocate more than
// the record says; and the result has the record's SHA-256 (image_mismatch). An image_size over
// 1 GiB, the largest image there is, is image_too_large whatever the caller's limit.
std::variant<std::vector<std::uint8_t>, Rejected> decode_image_object(std::string_view object,
                                                                      const IndexRecord& record);

}  // namespace jitcache::daemon::remote
