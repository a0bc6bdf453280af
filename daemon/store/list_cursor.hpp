// LIST's opaque paging cursor: the position (key id, namespace) of the last entry of a page, in the
// order LIST returns entries. The next page starts strictly after it, so entries added or removed
// between pages never make a page repeat or skip one that stayed.
//
// Encoding: base64url without padding of the 32-byte key id followed by the namespace as 4 bytes
// big-endian: always 48 characters, within the protocol's 64-character cursor limit (hex would need
// 72). Clients must treat it as opaque; the encoding may change with the schema.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <common/result.hpp>
#include <proto/digest.hpp>

namespace jitcache::daemon::store {

struct ListPosition {
  proto::Digest256 key_id;
  std::uint32_t namespace_id = 0;
};

std::string encode_list_cursor(const ListPosition& position);

// Anything but a string encode_list_cursor could have produced is ErrorCode::invalid_argument.
common::Result<ListPosition> decode_list_cursor(std::string_view cursor);

}  // namespace jitcache::daemon::store
