// The REMOTE_CHECK op's payloads (proto/PROTOCOL.md §5 REMOTE_CHECK) and their codec: what a
// daemon knows of its fleet tier's remotes and signing keys, or what it found by probing each remote
// now (`jitcache remote status` / `jitcache remote check`).
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
#include <proto/messages.hpp>
#include <proto/named_values.hpp>

namespace jitcache::proto {

// A remote's name (its URL without password) and the message of its first failure.
inline constexpr std::size_t k_max_remote_name_length = 512;
inline constexpr std::size_t k_max_remote_message_length = 1024;
// A signer id as text: 16 lower-case hex digits (proto/signing.hpp signer_hex).
inline constexpr std::size_t k_signer_hex_length = 16;
// Rationale: a fleet has a handful of remotes and a few keys in rotation; the bounds keep a reply
// well under the smallest max_frame_bytes (1 MiB) however long names and messages are. A daemon
// with more lists the first ones.
inline constexpr std::size_t k_max_remote_check_remotes = 64;
inline constexpr std::size_t k_max_remote_check_trusted = 256;

// Persisted on the wire: numbered explicitly, never reused. The values of the circuit breaker's
// state gauge (daemon/remote/circuit_breaker.hpp).
enum class BreakerState : std::uint8_t { closed = 0, open = 1, half_open = 2 };
inline constexpr std::array<NamedValue<BreakerState>, 3> k_breaker_states{{
    {BreakerState::closed, "closed"},
    {BreakerState::open, "open"},
    {BreakerState::half_open, "half_open"},
}};

// What a probe found for `reachable` and `writable`.
enum class ProbeAnswer : std::uint8_t { not_probed = 0, yes = 1, no = 2 };
inline constexpr std::array<NamedValue<ProbeAnswer>, 3> k_probe_answers{{
    {ProbeAnswer::not_probed, "not_probed"},
    {ProbeAnswer::yes, "yes"},
    {ProbeAnswer::no, "no"},
}};

// Whether a remote can hold fleet single flight's leases (a conditional write).
enum class LeaseSupport : std::uint8_t { unknown = 0, supported = 1, unsupported = 2 };
inline constexpr std::array<NamedValue<LeaseSupport>, 3> k_lease_supports{{
    {LeaseSupport::unknown, "unknown"},
    {LeaseSupport::supported, "supported"},
    {LeaseSupport::unsupported, "unsupported"},
}};

std::string_view breaker_state_name(BreakerState state);  // "half_open"; "unknown" outside the table
std::string_view probe_answer_name(ProbeAnswer answer);   // "not_probed", "yes", "no"
std::string_view lease_support_name(LeaseSupport support);

struct RemoteCheckRequest {
  // false: what the daemon knows now, without a network call; true: probe every remote now
  // (trusted callers only).
  bool probe = false;
};

struct RemoteCheckRemote {
  std::string name;  // the backend's name(): its URL without password, at most 512 bytes
  BreakerState breaker = BreakerState::closed;
  ProbeAnswer reachable = ProbeAnswer::not_probed;
  ProbeAnswer writable = ProbeAnswer::not_probed;  // not_probed also when the host has no signing key
  LeaseSupport leases = LeaseSupport::unknown;
  std::uint64_t latency_us = 0;  // the probe's ping; 0 when not probed
  std::string message;           // the first failure, at most 1024 bytes; empty when none
};

struct RemoteCheckReply {
  std::string signer;                      // this host's signer id (16 hex digits), empty when it does not sign
  std::string signing_message;             // the signing self-test's failure; empty when it passed or none ran
  std::vector<std::string> trusted;        // the signer ids of the trusted keys, at most 256
  std::vector<RemoteCheckRemote> remotes;  // in the configured order, at most 64
};

// Whether `text` is a signer id as the reply carries it: 16 lower-case hex digits.
bool is_signer_hex(std::string_view text);

Payload encode(const RemoteCheckRequest& m);
// Cuts names and messages to their limits and lists at most the first 64 remotes and 256 keys.
Payload encode(const RemoteCheckReply& m);

// Refuses a probe byte other than 0 or 1.
common::Result<RemoteCheckRequest> decode_remote_check_request(Bytes payload);
// Refuses counts over their limits, a signer that is not 16 lower-case hex digits (or empty, for
// the host's own), and a breaker state, probe answer or lease support outside its table.
common::Result<RemoteCheckReply> decode_remote_check_reply(Bytes payload);

}  // namespace jitcache::proto
