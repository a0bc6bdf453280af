// IncludeDirectives (client/src/nvrtc/include_directives.hpp) as bytes, for the scan memo that
// outlives the process (client/src/nvrtc/scan_memo.hpp). The layout is private to this client
// version: scan_memo.hpp's header names the version, and a memo of another version is not read.
// Decoding is bounds-checked field by field: a damaged memo is nullopt, never a crash.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <client/src/nvrtc/include_directives.hpp>
#include <proto/byte_io.hpp>

namespace jitcache::client::nvrtc {

void encode_directives(const IncludeDirectives& directives, proto::ByteWriter& out);
std::optional<IncludeDirectives> decode_directives(proto::ByteReader& in);

}  // namespace jitcache::client::nvrtc
