// The EXPLAIN and MISSES ops' payloads (proto/PROTOCOL.md §5 EXPLAIN, MISSES) and their codec:
// why a key misses, as the daemon sees it now (`jitcache explain`), and the daemon's recent misses
// and evictions (`jitcache misses`).
//
// Like messages.hpp, decoders check every count and length against its limit before using it and
// refuse a value outside its table and bytes after the last field; encoders cut text to its limit
// and lists to their maxima. Decode errors use ErrorCode::invalid_argument (→ bad_request).
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
#include <proto/key.hpp>
#include <proto/messages.hpp>
#include <proto/named_values.hpp>
#include <proto/wire.hpp>

namespace jitcache::proto {

// Rationale: a key has five fields and its options some twenty; a content digest rarely has more
// than a few entries (one per arch, driver build and option set in use). The bounds keep the
// largest reply (32 findings × 24 differences of 64 + 2 × 256 bytes, plus details) near 0.5 MiB,
// under the smallest max_frame_bytes (1 MiB), whatever the store holds.
inline constexpr std::size_t k_max_explain_findings = 32;
inline constexpr std::size_t k_max_explain_differences = 24;
inline constexpr std::size_t k_max_explain_field_length = 64;
inline constexpr std::size_t k_max_explain_value_length = 256;
inline constexpr std::size_t k_max_explain_detail_length = 1024;
// MISSES: at most this many misses and as many evictions in one reply (each record up to ~1.2 KiB).
inline constexpr std::uint32_t k_max_misses_listed = 256;

// Persisted on the wire: numbered explicitly, never reused.
enum class ExplainSelector : std::uint8_t { key = 0, key_id = 1 };
inline constexpr std::array<NamedValue<ExplainSelector>, 2> k_explain_selectors{{
    {ExplainSelector::key, "key"},
    {ExplainSelector::key_id, "key_id"},
}};

enum class ExplainVerdict : std::uint8_t { hit = 0, miss = 1 };
inline constexpr std::array<NamedValue<ExplainVerdict>, 2> k_explain_verdicts{{
    {ExplainVerdict::hit, "hit"},
    {ExplainVerdict::miss, "miss"},
}};

// What one finding says (PROTOCOL.md §5 EXPLAIN "Explain reasons").
enum class ExplainReason : std::uint8_t {
  hit = 1,                 // a live entry the caller sees serves the key
  other_driver = 2,        // an entry of the same content differing in the driver (api or build) only
  other_options = 3,       // ... in the options only; the differences name each option
  other_arch = 4,          // ... in the arch only
  other_key_schema = 5,    // ... in the key schema only
  other_fields = 6,        // ... in more than one of those
  quarantined = 7,         // the key's entry is quarantined (when, CUresult, stage, by whom)
  reported_by_caller = 8,  // a shared entry of the key the caller reported failing: not served to it
  hidden = 9,              // an entry of the key in a namespace the caller does not see
  compile_error = 10,      // the daemon remembers that compiling the key failed
  evicted = 11,            // the key's entry was evicted (when, why)
  no_content = 12,         // no entry with this content at all
  recent_miss = 13,        // a recent miss of the key (when, by which uid, which op)
  unknown_key = 14,        // asked by key id: no entry, miss or eviction of it is known
};
inline constexpr std::array<NamedValue<ExplainReason>, 14> k_explain_reasons{{
    {ExplainReason::hit, "hit"},
    {ExplainReason::other_driver, "other_driver"},
    {ExplainReason::other_options, "other_options"},
    {ExplainReason::other_arch, "other_arch"},
    {ExplainReason::other_key_schema, "other_key_schema"},
    {ExplainReason::other_fields, "other_fields"},
    {ExplainReason::quarantined, "quarantined"},
    {ExplainReason::reported_by_caller, "reported_by_caller"},
    {ExplainReason::hidden, "hidden"},
    {ExplainReason::compile_error, "compile_error"},
    {ExplainReason::evicted, "evicted"},
    {ExplainReason::no_content, "no_content"},
    {ExplainReason::recent_miss, "recent_miss"},
    {ExplainReason::unknown_key, "unknown_key"},
}};

// Why an entry was evicted; the numbers of daemon/store/eviction.hpp EvictionReason.
enum class EvictionCause : std::uint8_t { none = 0, size = 1, stale_driver = 2, quota = 3 };
inline constexpr std::array<NamedValue<EvictionCause>, 4> k_eviction_causes{{
    {EvictionCause::none, "none"},
    {EvictionCause::size, "size"},
    {EvictionCause::stale_driver, "stale_driver"},
    {EvictionCause::quota, "quota"},
}};

// How a recorded miss ended (daemon/store/store.hpp MissReason).
enum class MissKind : std::uint8_t { not_found = 0, quarantined = 1, corrupt = 2 };
inline constexpr std::array<NamedValue<MissKind>, 3> k_miss_kinds{{
    {MissKind::not_found, "not_found"},
    {MissKind::quarantined, "quarantined"},
    {MissKind::corrupt, "corrupt"},
}};

std::string_view explain_reason_name(ExplainReason reason);  // "other_driver"; "unknown" outside the table
std::string_view explain_verdict_name(ExplainVerdict verdict);
std::string_view eviction_cause_name(EvictionCause cause);
std::string_view miss_kind_name(MissKind kind);

struct ExplainRequest {
  ExplainSelector selector = ExplainSelector::key;
  KeyFields key;     // selector key: validated as LOOKUP's
  Digest256 key_id;  // selector key_id
};

// One field that differs: a key field ("arch", "driver", "key_schema") or an option
// ("option maxrreg"), with its value in the key asked about and in the entry found.
struct ExplainDifference {
  std::string field;
  std::string asked;
  std::string found;
};

// Every field is sent; those a reason does not use are zero or empty (PROTOCOL.md §5 EXPLAIN).
struct ExplainFinding {
  ExplainReason reason = ExplainReason::no_content;
  Digest256 key_id;  // the entry (or record) the finding is about
  std::uint32_t namespace_id = 0;
  std::int64_t at_ms = 0;       // hit, other_*: created; quarantined: quarantined; evicted; recent_miss
  std::uint32_t cu_result = 0;  // quarantined, reported_by_caller
  std::uint8_t stage = 0;       // quarantined, reported_by_caller: a FailureStage
  std::uint32_t uid = 0;        // quarantined: the reporter; recent_miss: who missed
  EvictionCause eviction = EvictionCause::none;  // evicted
  std::string detail;                            // quarantine detail, compile error message, recent_miss op, ...
  std::vector<ExplainDifference> differences;    // other_*: what differs
};

struct ExplainReply {
  ExplainVerdict verdict = ExplainVerdict::miss;
  bool key_known = false;  // false only when asked by a key id the daemon knows nothing of
  KeyFields key;           // the key explained (asked by key id: as the daemon found it)
  Digest256 key_id;
  std::vector<ExplainFinding> findings;  // at most k_max_explain_findings
};

struct MissesRequest {
  std::uint32_t limit = 50;  // 1..k_max_misses_listed, of each list
};

struct MissRecord {
  std::int64_t at_ms = 0;
  std::uint32_t uid = 0;
  Op op = Op::lookup;  // LOOKUP or COMPILE
  MissKind kind = MissKind::not_found;
  Digest256 key_id;          // zeros when only the fast key was asked (its content digest unknown)
  KeyFields key;             // its content zeros then
  Checksum128 content_fast;  // zeros when unknown
};

struct EvictionRecord {
  Digest256 key_id;
  std::uint32_t namespace_id = 0;
  KeyFields key;
  std::uint64_t stored_bytes = 0;
  std::uint64_t hits = 0;
  std::uint64_t compile_time_us = 0;
  std::int64_t evicted_at_ms = 0;
  EvictionCause cause = EvictionCause::size;
};

struct MissesReply {
  std::vector<MissRecord> misses;         // newest first
  std::vector<EvictionRecord> evictions;  // newest first
};

Payload encode(const ExplainRequest& m);
Payload encode(const ExplainReply& m);
Payload encode(const MissesRequest& m);
Payload encode(const MissesReply& m);

common::Result<ExplainRequest> decode_explain_request(Bytes payload);
common::Result<ExplainReply> decode_explain_reply(Bytes payload);
// Refuses a limit outside 1..k_max_misses_listed.
common::Result<MissesRequest> decode_misses_request(Bytes payload);
common::Result<MissesReply> decode_misses_reply(Bytes payload);

}  // namespace jitcache::proto
