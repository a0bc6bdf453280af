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
std::string encode_image_object(proto::Bytes raw);

// The raw image, when `object` is what `record` names: its size is record.object_size, it
// decompresses (image_corrupt) to no more than record.image_size bytes (never allocating more),
// and the result has that size and SHA-256 (image_mismatch).
std::variant<std::vector<std::uint8_t>, Rejected> decode_image_object(std::string_view object,
                                                                      const IndexRecord& record);

}  // namespace jitcache::daemon::remote
