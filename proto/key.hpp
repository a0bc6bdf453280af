// The cache key (docs/cache-key.md): four fields plus the key-schema version, and the key id
// derived from them.
//
//   content  the content digest (content_digest.hpp) of the exact bytes the JIT would compile (PTX
//            text, or the PTX entry a fat binary walk selects)
//   arch     the target code is generated for: "sm_90", "sm_90a", "sm_100f"
//   driver   the driver API version (cuDriverGetVersion, e.g. 13000) and the user-mode driver build
//            ("580.159.04"): the JIT lives in the driver and can change between builds of one API level
//   options  the canonical option string (jit_options.hpp)
//
// The key id is SHA-256 over a length-prefixed, domain-separated encoding of all of them, so two keys
// share an id only if every field is equal. Thread safety: free functions, no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <common/result.hpp>
#include <proto/content_digest.hpp>
#include <proto/digest.hpp>

namespace jitcache::proto {

// Bump when the meaning of any field or of the canonical option string changes: entries written
// under another schema are then never served (the schema is part of the key id).
// 2: the content digest became the chunked SHA-256 of content_digest.hpp (1: plain SHA-256).
inline constexpr std::uint16_t k_key_schema_version = 2;

// Field limits; the wire codec enforces the same numbers before it allocates.
inline constexpr std::size_t k_max_arch_length = 32;
inline constexpr std::size_t k_max_driver_build_length = 64;
inline constexpr std::size_t k_max_options_length = 1024;

struct KeyFields {
  std::uint16_t key_schema = k_key_schema_version;
  Digest256 content;
  std::string arch;
  std::uint32_t driver_api = 0;
  std::string driver_build;
  std::string options;

  bool operator==(const KeyFields&) const = default;
};

// The fast key (docs/cache-key.md "The fast key: look up first, verify after"): the key with its
// content digest replaced by the XXH3-128 of the same bytes. A client looks an entry up by it while
// the collision-resistant content digest is still being computed, then accepts the entry only if
// the content digest it records equals its own (PROTOCOL.md LOOKUP selector 2). XXH3 resists no
// adversary, so a fast key only ever *finds* an entry; the strong digest decides whether it is
// served to the driver.
struct FastKey {
  std::uint16_t key_schema = k_key_schema_version;
  Checksum128 content_fast;
  std::string arch;
  std::uint32_t driver_api = 0;
  std::string driver_build;
  std::string options;

  bool operator==(const FastKey&) const = default;
};

// The fast key of `key` for a source whose XXH3-128 is `content_fast` (every other field copied).
FastKey fast_key_of(const KeyFields& key, const Checksum128& content_fast);
// True when `key` has every field of `fast` but the content (which a fast key does not carry).
bool same_fields_but_content(const FastKey& fast, const KeyFields& key);
// The fast key's id, what the store indexes; SHA-256 over a preimage tagged apart from key_id's.
Digest256 fast_key_id(const FastKey& key);
// validate_key's rules for every field but the content; content_fast must not be all zeros.
common::Result<void> validate_fast_key(const FastKey& key);

// The combined key id. Pure function of every field including key_schema; the encoding (a tagged,
// u32-length-prefixed preimage) is written out in key.cpp and docs/cache-key.md.
Digest256 key_id(const KeyFields& key);

// Checks that every field is well formed: schema is k_key_schema_version, content is not all zeros
// (a key whose content was never set), arch passes is_valid_arch, driver_api > 0, driver_build is
// 1..k_max_driver_build_length printable bytes without spaces, options is at most
// k_max_options_length bytes and a canonical option string (canonical form, not merely parseable).
// Failures are ErrorCode::invalid_argument with a message naming the field and its value. The
// daemon refuses a request whose key fails this, so nothing mis-keyed is ever stored.
common::Result<void> validate_key(const KeyFields& key);

// Arch helpers: "sm_90a" is accepted; "compute_90", "sm_9x", "sm_9" and "sm_090" are not (two or
// more digits, no leading zero, so that one target has one spelling).
bool is_valid_arch(std::string_view arch);

// Parses the CLI/config form of the driver field, "API/BUILD" (e.g. "13000/580.159.04"): API is
// decimal digits only, 1..2^32-1; BUILD follows the driver_build rule of validate_key.
struct DriverId {
  std::uint32_t api = 0;
  std::string build;
};
common::Result<DriverId> parse_driver_id(std::string_view text);

}  // namespace jitcache::proto
