// The names of what the tier keeps in a remote (docs/remote-layout.md "Spaces"): each a space and
// an id of lower-case hex digits.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <proto/digest.hpp>

namespace jitcache::daemon::remote {

inline constexpr std::string_view k_space_index = "idx";    // key id -> signed record
inline constexpr std::string_view k_space_fast = "fk";      // fast key id -> the same record
inline constexpr std::string_view k_space_image = "img";    // SHA-256 of the image -> zstd image
inline constexpr std::string_view k_space_source = "src";   // content digest -> zstd PTX
inline constexpr std::string_view k_space_lease = "lease";  // key id -> the compiling host
inline constexpr std::string_view k_space_probe = "probe";  // `jitcache remote check`'s write test
inline constexpr std::string_view k_space_ask = "ask";      // key id -> a consumer's compile ask
inline constexpr std::string_view k_space_fleet = "fleet";  // "builders": some builder is up
inline constexpr std::string_view k_fleet_builders = "builders";
inline constexpr std::string_view k_fleet_wants = "wants";  // a queue: keys consumers missed
inline constexpr std::string_view k_fleet_asks = "asks";    // a queue: keys consumers ask builders to compile

inline std::string hex_id(const proto::Digest256& digest) { return proto::to_hex(digest); }

}  // namespace jitcache::daemon::remote
