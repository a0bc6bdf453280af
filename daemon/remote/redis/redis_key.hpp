// The Redis key of a RemoteKey: "<prefix><space>:{<id>}" (docs/remote-layout.md "Redis"). The id
// in braces is the key's Cluster hash tag, so all spaces of one id ("idx" and "lease" of one key
// id) share a slot. The parts are checked, not trusted: a brace or a space in them would move the
// hash tag or make a key an operator's ACL pattern does not cover.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <common/result.hpp>
#include <daemon/remote/backend/remote_backend.hpp>

namespace jitcache::daemon::remote {

inline constexpr std::size_t k_max_remote_space_length = 16;
inline constexpr std::size_t k_max_remote_id_length = 128;

// invalid_argument unless the space is 1..16 of [a-z] and the id 1..128 of [A-Za-z0-9._-].
common::Result<std::string> redis_key_name(std::string_view prefix, RemoteKey key);

}  // namespace jitcache::daemon::remote
