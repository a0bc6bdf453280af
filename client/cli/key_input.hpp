// Turning what the user typed into cache-key fields (proto/key.hpp), built by the key builder
// (client/src/key/key_builder.hpp) and checked locally so a mistake gets a precise message and
// exit 2 before anything is sent. Errors are ErrorCode::io when a file
// could not be read and ErrorCode::invalid_argument for everything else (see fail_local).
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <common/result.hpp>
#include <proto/key.hpp>

namespace jitcache::client::cli {

// What the user gave to name an exact key (put, get --source).
struct KeyInput {
  std::string source_path;  // the PTX whose bytes, as on disk, are digested
  std::string arch;
  std::string driver;   // "API/BUILD"
  std::string options;  // option text for proto::canonicalize_option_text; "" = all defaults
};

// Reads the source, digests it, canonicalises the options and validates the whole key. With
// `content_fast`, also stores the source's XXH3-128 there (the fast key's content, key.hpp).
common::Result<proto::KeyFields> build_key(const KeyInput& input, proto::Checksum128* content_fast = nullptr);

// --arch: sm_<digits> with an optional a or f.
common::Result<void> check_arch(std::string_view arch);

// The ls --driver filter: "API/BUILD", "API" alone (all digits) or "BUILD" alone (anything else).
// A part left out is 0 / empty, which LIST reads as "any".
struct DriverFilter {
  std::uint32_t api = 0;
  std::string build;
};
common::Result<DriverFilter> parse_driver_filter(std::string_view text);

// A key id prefix as typed (get, rm, ls --prefix): lower-cased and checked to be 8 to 64 hex
// digits, the range the protocol accepts.
common::Result<std::string> parse_key_id_prefix(std::string_view text);

}  // namespace jitcache::client::cli
