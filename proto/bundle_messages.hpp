// The EXPORT_BUNDLE and IMPORT_BUNDLE ops' payloads (proto/PROTOCOL.md §5 EXPORT_BUNDLE,
// IMPORT_BUNDLE) and their codec. The bundle itself never travels in a payload: the client passes
// its file as a descriptor on the request's first byte (header flag request_fd), and the daemon
// writes or reads it there (docs/bundle-format.md).
//
// Like messages.hpp, decoders check every count and length against its limit before using it and
// refuse a value outside its table and bytes after the last field. Decode errors use
// ErrorCode::invalid_argument (→ bad_request) or ErrorCode::too_large (→ too_large).
// Thread safety: free functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>
#include <proto/byte_io.hpp>
#include <proto/digest.hpp>
#include <proto/messages.hpp>
#include <proto/named_values.hpp>

namespace jitcache::proto {

// Rationale: `jitcache export --keys FILE` names the entries a program needs, a few hundred; the
// bound keeps the request within the smallest max_frame_bytes (1 MiB) at 32 bytes a key id.
inline constexpr std::size_t k_max_export_key_ids = 16384;
// The exporting host's name in a bundle's header (docs/bundle-format.md).
inline constexpr std::size_t k_max_bundle_host_length = 255;

// Persisted on the wire: numbered explicitly, never reused. Where IMPORT_BUNDLE puts the entries.
enum class ImportTarget : std::uint8_t {
  shared = 0,  // the shared namespace: a trusted caller, or a bundle signed by a trusted key
  own = 1,     // the caller's own namespace (its uid's), within namespace_quota
  // The shared namespace, bringing back entries an operator removed from it (and forgetting the
  // removal): a trusted caller only.
  shared_restoring_removed = 2,
};
inline constexpr std::array<NamedValue<ImportTarget>, 3> k_import_targets{{
    {ImportTarget::shared, "shared"},
    {ImportTarget::own, "own"},
    {ImportTarget::shared_restoring_removed, "shared_restoring_removed"},
}};
std::string_view import_target_name(ImportTarget target);

struct ExportBundleRequest {
  std::string arch;                // empty: any; else a valid arch (≤ 32)
  std::uint32_t driver_api = 0;    // 0: any
  std::string driver_build;        // empty: any (≤ 64)
  std::int64_t since_ms = 0;       // entries stored at or after, ms since the epoch; 0: any
  std::vector<Digest256> key_ids;  // empty: all; at most k_max_export_key_ids
};

struct ExportBundleReply {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;  // the bundle file's size
  std::string signer;       // 16 hex digits; empty: unsigned (the daemon has no signing key)
  Digest256 digest;         // the bundle's (its trailer's)
};

struct ImportBundleRequest {
  ImportTarget target = ImportTarget::shared;
};

struct ImportBundleReply {
  std::uint32_t namespace_id = 0;  // where the entries went
  std::uint64_t entries = 0;       // in the bundle
  std::uint64_t imported = 0;
  std::uint64_t skipped = 0;    // already present
  std::string signer;           // 16 hex digits; empty: unsigned
  bool signer_trusted = false;  // the signer is one of the daemon's trusted keys
  std::string host;             // the exporting host, as the bundle names it (≤ 255)
  Digest256 digest;
};

Payload encode(const ExportBundleRequest& m);
Payload encode(const ExportBundleReply& m);
Payload encode(const ImportBundleRequest& m);
Payload encode(const ImportBundleReply& m);

common::Result<ExportBundleRequest> decode_export_bundle_request(Bytes payload);
common::Result<ExportBundleReply> decode_export_bundle_reply(Bytes payload);
common::Result<ImportBundleRequest> decode_import_bundle_request(Bytes payload);
common::Result<ImportBundleReply> decode_import_bundle_reply(Bytes payload);

}  // namespace jitcache::proto
