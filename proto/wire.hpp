// Framing of the jitcache wire protocol (proto/PROTOCOL.md §2-§3, §5): the 24-byte header, op codes,
// status codes, capability bits, header flags and limits, each numbered vocabulary with the table
// that names it (named_values.hpp). Thread safety: free functions over caller-owned buffers.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include <common/result.hpp>
#include <proto/named_values.hpp>

namespace jitcache::proto {

inline constexpr std::array<std::uint8_t, 4> k_magic{0x4A, 0x43, 0x57, 0x31};  // "JCW1"
inline constexpr std::uint16_t k_protocol_version = 1;
inline constexpr std::size_t k_header_size = 24;
inline constexpr std::uint64_t k_default_max_frame_bytes = 64ull << 20;
inline constexpr std::uint64_t k_min_max_frame_bytes = 1ull << 20;
inline constexpr std::size_t k_max_message_length = 1024;

// Persisted on the wire: numbered explicitly, never reused.
enum class Op : std::uint16_t {
  none = 0,  // replies to a header that could not be read
  hello = 1,
  ping = 2,
  lookup = 3,
  put = 4,
  stats = 5,
  list = 6,
  remove = 7,
  compile = 8,  // needs k_capability_compile
  report_failure = 9,
  gc = 10,            // needs k_capability_gc; trusted callers only
  verify = 11,        // needs k_capability_verify; trusted callers only
  hit_note = 12,      // needs k_capability_hit_note: a hit served from a published file
  remote_check = 13,  // needs k_capability_remote_check; a probe is for trusted callers only
  explain = 14,       // needs k_capability_explain: why a key would miss (explain_messages.hpp)
  misses = 15,        // needs k_capability_explain: the recent misses and evictions
  // Bundles (docs/bundle-format.md): need k_capability_bundles, and the file as a descriptor
  // (k_flag_request_fd).
  export_bundle = 16,
  import_bundle = 17,
  // needs k_capability_nvrtc_note: an NVRTC compile the cache could not serve, and why
  // (nvrtc_note_messages.hpp)
  nvrtc_note = 18,
  // needs k_capability_nvrtc_compile: the daemon compiles an NVRTC program with the NVRTC its
  // administrator configured (nvrtc_compile_messages.hpp)
  nvrtc_compile = 19,
};
inline constexpr std::array<NamedValue<Op>, 20> k_ops{{
    {Op::none, "NONE"},
    {Op::hello, "HELLO"},
    {Op::ping, "PING"},
    {Op::lookup, "LOOKUP"},
    {Op::put, "PUT"},
    {Op::stats, "STATS"},
    {Op::list, "LIST"},
    {Op::remove, "REMOVE"},
    {Op::compile, "COMPILE"},
    {Op::report_failure, "REPORT_FAILURE"},
    {Op::gc, "GC"},
    {Op::verify, "VERIFY"},
    {Op::hit_note, "HIT_NOTE"},
    {Op::remote_check, "REMOTE_CHECK"},
    {Op::explain, "EXPLAIN"},
    {Op::misses, "MISSES"},
    {Op::export_bundle, "EXPORT_BUNDLE"},
    {Op::import_bundle, "IMPORT_BUNDLE"},
    {Op::nvrtc_note, "NVRTC_NOTE"},
    {Op::nvrtc_compile, "NVRTC_COMPILE"},
}};

enum class Status : std::uint16_t {
  ok = 0,
  not_found = 1,
  bad_request = 2,
  too_large = 3,
  forbidden = 4,
  busy = 5,
  unavailable = 6,
  internal = 7,
  compile_error = 8,   // COMPILE: the compiler rejected the PTX (the payload adds its log)
  cannot_compile = 9,  // COMPILE: cannot compile faithfully; build it yourself
  worker_failed = 10,  // COMPILE: the compile worker crashed, hung or ran out of a limit
  no_space = 11,       // the daemon's disk (or quota) is full: the write was not made; reads still work
};
inline constexpr std::size_t k_status_count = 12;
inline constexpr std::array<NamedValue<Status>, k_status_count> k_statuses{{
    {Status::ok, "ok"},
    {Status::not_found, "not_found"},
    {Status::bad_request, "bad_request"},
    {Status::too_large, "too_large"},
    {Status::forbidden, "forbidden"},
    {Status::busy, "busy"},
    {Status::unavailable, "unavailable"},
    {Status::internal, "internal"},
    {Status::compile_error, "compile_error"},
    {Status::cannot_compile, "cannot_compile"},
    {Status::worker_failed, "worker_failed"},
    {Status::no_space, "no_space"},
}};

// Capability bits announced in HELLO (PROTOCOL.md §5 HELLO "Capability bits"). Persisted: never
// reused.
inline constexpr std::uint64_t k_capability_store = 1ull << 0;
// COMPILE: the daemon compiles misses itself (its compile worker answered the start-up probe).
inline constexpr std::uint64_t k_capability_compile = 1ull << 1;
inline constexpr std::uint64_t k_capability_report_failure = 1ull << 2;
// GC (op 10) and LIST's trailing stale_only.
inline constexpr std::uint64_t k_capability_gc = 1ull << 3;
// Bit 4 was announced for VERIFY before VERIFY existed and is never used (a persisted number).
// LOOKUP selector 2 (by fast key) and PUT's trailing content_fast.
inline constexpr std::uint64_t k_capability_fast_key = 1ull << 5;
// The header flag k_flag_image_fd: images handed over as a sealed file descriptor.
inline constexpr std::uint64_t k_capability_image_fd = 1ull << 6;
// VERIFY (op 11).
inline constexpr std::uint64_t k_capability_verify = 1ull << 7;
// HIT_NOTE (op 12), and the published directory beside the socket (PROTOCOL.md §8).
inline constexpr std::uint64_t k_capability_hit_note = 1ull << 8;
// COMPILE of an nvJitLink link: the request's trailing link inputs (PROTOCOL.md §5 COMPILE).
inline constexpr std::uint64_t k_capability_compile_link = 1ull << 9;
// REMOTE_CHECK (op 13): the fleet tier's remotes and keys (remote_check_messages.hpp).
inline constexpr std::uint64_t k_capability_remote_check = 1ull << 10;
// EXPLAIN and MISSES (ops 14, 15): why a key misses, the recent misses and evictions.
inline constexpr std::uint64_t k_capability_explain = 1ull << 11;
// EXPORT_BUNDLE (op 16) and IMPORT_BUNDLE (op 17), and the request flag k_flag_request_fd.
inline constexpr std::uint64_t k_capability_bundles = 1ull << 12;
// NVRTC_NOTE (op 18): the daemon counts the NVRTC compiles its clients could not cache, by reason.
inline constexpr std::uint64_t k_capability_nvrtc_note = 1ull << 13;
// NVRTC_COMPILE (op 19): the NVRTC the administrator configured (compile_nvrtc_library) passed the
// compile worker's probe, and the daemon compiles eligible NVRTC programs with it.
inline constexpr std::uint64_t k_capability_nvrtc_compile = 1ull << 14;
inline constexpr std::array<NamedValue<std::uint64_t>, 14> k_capabilities{{
    {k_capability_store, "store"},
    {k_capability_compile, "compile"},
    {k_capability_report_failure, "report_failure"},
    {k_capability_gc, "gc"},
    {k_capability_fast_key, "fast_key"},
    {k_capability_image_fd, "image_fd"},
    {k_capability_verify, "verify"},
    {k_capability_hit_note, "hit_note"},
    {k_capability_compile_link, "compile_link"},
    {k_capability_remote_check, "remote_check"},
    {k_capability_explain, "explain"},
    {k_capability_bundles, "bundles"},
    {k_capability_nvrtc_note, "nvrtc_note"},
    {k_capability_nvrtc_compile, "nvrtc_compile"},
}};
// Bit numbers once announced and never to be given another meaning.
inline constexpr std::array<unsigned, 1> k_retired_capability_bits{4};

// Header flags (PROTOCOL.md §2 "Header flags"). Persisted: never reused. In a request,
// k_flag_image_fd says "I accept the image of this reply as a file descriptor"; in a reply, that it
// comes as one (PROTOCOL.md §4 "Images by descriptor"). A request with a flag outside
// k_known_request_flags is refused.
inline constexpr std::uint16_t k_flag_image_fd = 1u << 0;
// In a request: a file descriptor rides on the frame's first byte (SCM_RIGHTS): the bundle file of
// EXPORT_BUNDLE and IMPORT_BUNDLE (PROTOCOL.md §2 "Header flags").
inline constexpr std::uint16_t k_flag_request_fd = 1u << 1;
inline constexpr std::uint16_t k_known_request_flags = k_flag_image_fd | k_flag_request_fd;
inline constexpr std::array<NamedValue<std::uint16_t>, 2> k_header_flags{{
    {k_flag_image_fd, "image_fd"},
    {k_flag_request_fd, "request_fd"},
}};

std::string_view op_name(Op op);         // "LOOKUP"; "unknown" outside k_ops
std::string_view status_name(Status s);  // "not_found"; "unknown" outside k_statuses
bool is_implemented_op(Op op);           // v1 implements HELLO..NVRTC_NOTE
bool is_known_op(std::uint16_t value);   // numbered in the table, implemented or reserved

struct FrameHeader {
  std::uint16_t version = k_protocol_version;
  Op op = Op::none;
  Status status = Status::ok;
  std::uint16_t flags = 0;
  std::uint32_t request_id = 0;
  std::uint64_t payload_length = 0;
};

using HeaderBytes = std::array<std::uint8_t, k_header_size>;

HeaderBytes encode_header(const FrameHeader& header);

// Why a header was refused; the reply status and whether the connection must close follow from it.
struct HeaderError {
  Status status;  // bad_request or too_large
  std::string message;
  std::uint16_t op_echo;  // the op to put in the error reply (0 when the magic was wrong)
  std::uint32_t request_id_echo;
};

// Parses and checks a request header: magic, version, flags and payload_length <= max_frame_bytes.
// Every failure here closes the connection after the error reply (PROTOCOL.md §1). The op number is
// not checked here: an unknown op is answered per request and keeps the connection.
std::optional<HeaderError> check_request_header(const HeaderBytes& raw, std::uint64_t max_frame_bytes,
                                                FrameHeader& out);

// Parses a reply header for a client: magic, version and payload_length <= max_payload.
common::Result<FrameHeader> decode_reply_header(const HeaderBytes& raw, std::uint64_t max_payload);

}  // namespace jitcache::proto
