// The source object: the PTX a builder compiled an entry from, kept in space "src" under the key's
// content digest (docs/remote-layout.md "Source object"), so that any host can compile the entry
// again and compare (remote_verify_sample).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <proto/digest.hpp>

namespace jitcache::daemon::remote {

std::string encode_source_object(proto::Bytes source);
// The bytes of `object`, when it is one zstd frame that records a size of at most max_bytes and
// holds that many; nullopt otherwise. Never allocates past max_bytes. Nothing is checked of them.
std::optional<std::vector<std::uint8_t>> decompress_source(std::string_view object, std::uint64_t max_bytes);
// The source, when `object` is a zstd frame of at most max_bytes whose content digest
// (proto/content_digest.hpp) is `content`; nullopt otherwise. Never allocates past max_bytes.
std::optional<std::vector<std::uint8_t>> decode_source_object(std::string_view object, const proto::Digest256& content,
                                                              std::uint64_t max_bytes);

}  // namespace jitcache::daemon::remote
