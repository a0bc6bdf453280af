// Request and reply payloads of every implemented op (proto/PROTOCOL.md §4-§5) and their codec.
//
// Decoders check every length against its limit before using it and return views into the payload
// for images, so a PUT's image is never copied between the socket buffer and the store, and a
// LOOKUP reply's image is sent from the store's buffer by a scatter-gather write (the reply "head" is
// encoded separately from the image bytes). Decode errors use ErrorCode::invalid_argument (→
// bad_request) or ErrorCode::too_large (→ too_large). Thread safety: free functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <common/result.hpp>
#include <proto/byte_io.hpp>
#include <proto/digest.hpp>
#include <proto/key.hpp>
#include <proto/named_values.hpp>
#include <proto/wire.hpp>

namespace jitcache::proto {

inline constexpr std::size_t k_max_client_name_length = 64;
inline constexpr std::size_t k_max_producer_length = 128;
inline constexpr std::size_t k_max_version_string_length = 64;
inline constexpr std::size_t k_max_stat_name_length = 64;
inline constexpr std::size_t k_max_cursor_length = 64;
inline constexpr std::size_t k_min_key_id_prefix_length = 8;
inline constexpr std::uint32_t k_max_list_limit = 1000;
inline constexpr std::uint32_t k_max_stats_count = 4096;
inline constexpr std::size_t k_max_failure_detail_length = 1024;
inline constexpr std::size_t k_max_integrity_text_length = 1024;
inline constexpr std::uint32_t k_max_verify_listed = 100;

using Payload = std::vector<std::uint8_t>;

// A whole frame (header + payload) for small messages.
Payload encode_frame(Op op, Status status, std::uint32_t request_id, const Payload& payload);

// Error replies carry one str16 message, cut to k_max_message_length.
Payload encode_error_message(std::string_view message);
common::Result<std::string> decode_error_message(Bytes payload);

// 8..64 hex digits (or empty when allow_empty).
bool is_valid_key_id_prefix(std::string_view prefix, bool allow_empty = false);

struct HelloRequest {
  std::uint16_t min_version = k_protocol_version;
  std::uint16_t max_version = k_protocol_version;
  std::string client_name;
};
struct HelloReply {
  std::uint16_t version = k_protocol_version;
  std::uint64_t capabilities = 0;
  std::string daemon_version;
  std::uint64_t max_frame_bytes = 0;
};

struct EntryInfo {
  Digest256 key_id;
  KeyFields key;
  std::uint32_t namespace_id = 0;
  std::string producer;
  std::uint8_t codec = 0;
  std::uint64_t raw_size = 0;
  std::uint64_t stored_size = 0;
  Checksum128 checksum;
  std::int64_t created_at_ms = 0;
  std::int64_t last_used_at_ms = 0;
  std::uint64_t hits = 0;
  std::uint64_t compile_time_us = 0;
  std::int64_t quarantined_at_ms = 0;  // 0: live; else when REPORT_FAILURE quarantined it
};

// Persisted on the wire: numbered explicitly, never reused. fast_key needs k_capability_fast_key.
enum class LookupSelector : std::uint8_t { key = 0, key_id_prefix = 1, fast_key = 2 };
inline constexpr std::array<NamedValue<LookupSelector>, 3> k_lookup_selectors{{
    {LookupSelector::key, "key"},
    {LookupSelector::key_id_prefix, "key_id_prefix"},
    {LookupSelector::fast_key, "fast_key"},
}};

struct LookupRequest {
  LookupSelector selector = LookupSelector::key;
  KeyFields key;              // selector key
  std::string key_id_prefix;  // selector key_id_prefix
  FastKey fast_key;           // selector fast_key
};
struct LookupReply {
  EntryInfo info;
  Bytes image;  // a view into the decoded payload
};
// A LOOKUP reply whose header has k_flag_image_fd: the image is in the descriptor that came with
// the frame, `image_size` bytes from its start.
struct LookupReplyByDescriptor {
  EntryInfo info;
  std::uint64_t image_size = 0;
};

struct PutRequest {
  KeyFields key;
  std::string producer;
  std::uint64_t compile_time_us = 0;
  Bytes image;  // a view: into the received payload (daemon) or the caller's buffer (client)
  // XXH3-128 of the source the key's content digests, so LOOKUP selector 2 finds the entry. Sent
  // after the image, and only to a daemon that sets k_capability_fast_key.
  std::optional<Checksum128> content_fast;
};
struct PutReply {
  Digest256 key_id;
  std::uint32_t namespace_id = 0;
  bool replaced = false;
};

struct StatsReply {
  std::vector<std::pair<std::string, std::uint64_t>> values;
};

struct ListRequest {
  std::string arch;
  std::uint32_t driver_api = 0;
  std::string driver_build;
  bool namespace_filter = false;
  std::uint32_t namespace_id = 0;
  std::string key_id_prefix;
  std::uint32_t limit = 100;
  std::string cursor;
  // Trailing, behind k_capability_gc: only entries of a stale driver. Encoded only when set, so a
  // LIST without it reads the same to an older daemon.
  bool stale_only = false;
};
struct ListReply {
  std::vector<EntryInfo> entries;
  std::string next_cursor;
};

// GC (request: empty). Trusted callers only.
struct GcReply {
  std::uint64_t evicted_entries = 0;
  std::uint64_t evicted_bytes = 0;  // stored bytes
  std::uint64_t stale_entries = 0;  // of the evicted, those of a stale driver
  std::uint64_t entries = 0;        // left in the store
  std::uint64_t bytes_stored = 0;   // left in the store
};

// VERIFY (request: empty). Trusted callers only.
struct VerifiedRemoval {
  Digest256 key_id;
  std::uint32_t namespace_id = 0;
};
struct VerifyReply {
  std::string integrity;  // PRAGMA integrity_check: "ok", or its findings (cut to 1024 bytes)
  std::uint64_t entries_checked = 0;
  std::uint64_t entries_removed = 0;
  std::vector<VerifiedRemoval> removed;  // the first k_max_verify_listed of entries_removed
  std::uint64_t duration_ms = 0;
};

struct RemoveRequest {
  std::string key_id_prefix;
};
struct RemoveReply {
  std::uint32_t removed = 0;
};

// Where a client's load walk failed (docs/client-guide.md §6). Persisted on the wire and in the
// store's quarantine_stage column: numbered explicitly, never reused.
enum class FailureStage : std::uint8_t {
  image = 1,        // no image for the device
  ptx_version = 2,  // the driver cannot JIT this PTX ISA version
  jit = 3,          // the JIT compile itself failed
  load = 4,         // relocation or resources
};
inline constexpr std::array<NamedValue<FailureStage>, 4> k_failure_stages{{
    {FailureStage::image, "image"},
    {FailureStage::ptx_version, "ptx_version"},
    {FailureStage::jit, "jit"},
    {FailureStage::load, "load"},
}};
std::string_view failure_stage_name(FailureStage stage);  // "ptx_version"; "unknown" outside k_failure_stages

struct ReportFailureRequest {
  KeyFields key;
  std::uint32_t cu_result = 0;  // the driver's CUresult, raw; never 0 (CUDA_SUCCESS)
  FailureStage stage = FailureStage::load;
  std::string detail;  // free text, at most k_max_failure_detail_length bytes
};

// Persisted on the wire: numbered explicitly, never reused.
// hidden_from_reporter: a shared entry reported by an untrusted uid is no longer served to that uid
// and is quarantined for everyone once enough distinct uids report it (PROTOCOL.md §5).
enum class ReportFailureOutcome : std::uint8_t { quarantined = 0, already_quarantined = 1, hidden_from_reporter = 2 };
inline constexpr std::array<NamedValue<ReportFailureOutcome>, 3> k_report_failure_outcomes{{
    {ReportFailureOutcome::quarantined, "quarantined"},
    {ReportFailureOutcome::already_quarantined, "already_quarantined"},
    {ReportFailureOutcome::hidden_from_reporter, "hidden_from_reporter"},
}};

struct ReportFailureReply {
  ReportFailureOutcome outcome = ReportFailureOutcome::quarantined;
  std::uint32_t namespace_id = 0;  // of the entry the report applied to
};

// HIT_NOTE (op 12): a client loaded the published copy of the entry with this fast key (PROTOCOL.md
// §5 HIT_NOTE). The reply is ok and empty; a client need not read it.
struct HitNoteRequest {
  FastKey fast_key;
};

// Composite fields, exposed for tests and for the LOOKUP reply head.
void encode_key(ByteWriter& w, const KeyFields& key);
common::Result<KeyFields> decode_key(ByteReader& r);
void encode_fast_key(ByteWriter& w, const FastKey& key);
common::Result<FastKey> decode_fast_key(ByteReader& r);
void encode_entry_info(ByteWriter& w, const EntryInfo& info);
common::Result<EntryInfo> decode_entry_info(ByteReader& r);

Payload encode(const HelloRequest& m);
Payload encode(const HelloReply& m);
Payload encode(const LookupRequest& m);
Payload encode(const PutRequest& m);  // copies the image: for clients and tests
Payload encode(const PutReply& m);
Payload encode(const StatsReply& m);
Payload encode(const ListRequest& m);
Payload encode(const ListReply& m);
Payload encode(const RemoveRequest& m);
Payload encode(const RemoveReply& m);
Payload encode(const GcReply& m);
Payload encode(const VerifyReply& m);
Payload encode(const ReportFailureRequest& m);
Payload encode(const ReportFailureReply& m);
Payload encode(const HitNoteRequest& m);

// Everything of a PUT request before the image bytes, and what follows them (content_fast, when
// set); the caller sends head, image and trailer in turn, so a client can stream an image from
// its own buffer.
Payload encode_put_request_head(const PutRequest& m);
Payload encode_put_request_trailer(const PutRequest& m);

// Everything of a LOOKUP reply but the image bytes, which the daemon sends from the store's buffer.
Payload encode_lookup_reply_head(const EntryInfo& info, std::uint32_t image_size);
// The whole payload of a LOOKUP reply whose image travels as a descriptor.
Payload encode(const LookupReplyByDescriptor& m);

// The request decoders apply request_fields.hpp: client_name (HELLO), producer (PUT) and detail
// (REPORT_FAILURE) must be printable text, and PUT's compile_time_us at most 2^63 - 1.
common::Result<HelloRequest> decode_hello_request(Bytes payload);
common::Result<HelloReply> decode_hello_reply(Bytes payload);
common::Result<LookupRequest> decode_lookup_request(Bytes payload);
common::Result<LookupReply> decode_lookup_reply(Bytes payload);
common::Result<LookupReplyByDescriptor> decode_lookup_reply_by_descriptor(Bytes payload);
common::Result<PutRequest> decode_put_request(Bytes payload);
common::Result<PutReply> decode_put_reply(Bytes payload);
common::Result<void> decode_empty(Bytes payload, std::string_view op);
common::Result<StatsReply> decode_stats_reply(Bytes payload);
common::Result<ListRequest> decode_list_request(Bytes payload);
common::Result<ListReply> decode_list_reply(Bytes payload);
common::Result<RemoveRequest> decode_remove_request(Bytes payload);
common::Result<RemoveReply> decode_remove_reply(Bytes payload);
common::Result<GcReply> decode_gc_reply(Bytes payload);
// Refuses a list longer than k_max_verify_listed or than entries_removed.
common::Result<VerifyReply> decode_verify_reply(Bytes payload);
// Refuses a stage outside 1..4, a cu_result of 0 and a detail over its limit or not printable.
common::Result<ReportFailureRequest> decode_report_failure_request(Bytes payload);
// Refuses an outcome outside k_report_failure_outcomes (0, 1, 2).
common::Result<ReportFailureReply> decode_report_failure_reply(Bytes payload);
common::Result<HitNoteRequest> decode_hit_note_request(Bytes payload);

}  // namespace jitcache::proto
