// The one check every image passes before the store hands it out (lookups) or keeps it (VERIFY):
// the blob has the entry's stored_size, decodes under the entry's codec to exactly raw_size bytes
// (image_codec.hpp), and those raw bytes match the entry's XXH3-128. Anything else is a damaged
// entry, except a codec this code does not know, which a newer jitcached may have written.
//
// Thread safety: a free function over values the caller owns.
#pragma once

#include <optional>
#include <variant>

#include <proto/messages.hpp>

#include <daemon/store/image_codec.hpp>

namespace jitcache::daemon::store {

// `stored`: the blob as read; nullopt when the entry has no blob row.
std::variant<ImageBuffer, DecodeFailure> verified_image(const proto::EntryInfo& info,
                                                        std::optional<ImageBuffer> stored);

}  // namespace jitcache::daemon::store
