// The NVRTC_NOTE op's payload (proto/PROTOCOL.md §5 NVRTC_NOTE) and its codec: a client tells the
// daemon that an NVRTC compile was NVRTC's own (outcome uncached_fallback, docs/cache-key.md "What
// makes an NVRTC compile NVRTC's own") and why, so that the daemon's figures (STATS
// nvrtc_uncached_*, /metrics jitcache_nvrtc_uncached_total) show what the cache could not serve,
// which it never sees otherwise: such a compile sends no LOOKUP.
//
// Decode errors use ErrorCode::invalid_argument (→ bad_request): a reason outside the table, or
// bytes after it. Thread safety: free functions.
#pragma once

#include <array>
#include <cstdint>

#include <common/result.hpp>
#include <proto/byte_io.hpp>
#include <proto/messages.hpp>
#include <proto/named_values.hpp>

namespace jitcache::proto {

// Persisted on the wire and in the daemon's figure names: numbered explicitly, never reused.
enum class NvrtcUncachedReason : std::uint8_t {
  side_effect_option = 1,  // an option that writes or reads files besides the headers (--create-pch, --time)
  unknown_option = 2,      // an option the table lacks, a path option without its value, two -arch, a null option
  unnamed_include = 3,     // a read the include scan cannot name: an include through a macro, a FIFO, too many files
  unreadable_library = 4,  // NVRTC's version, library file or builtins file could not be read
  compiled_before = 5,     // a second nvrtcCompileProgram of one program
  not_stored = 6,          // NVRTC failed for a reason other than the source (out of memory, internal error)
  internal_error = 7,      // the cache failed inside the client and NVRTC compiled without it
};
inline constexpr std::array<NamedValue<NvrtcUncachedReason>, 7> k_nvrtc_uncached_reasons{{
    {NvrtcUncachedReason::side_effect_option, "side_effect_option"},
    {NvrtcUncachedReason::unknown_option, "unknown_option"},
    {NvrtcUncachedReason::unnamed_include, "unnamed_include"},
    {NvrtcUncachedReason::unreadable_library, "unreadable_library"},
    {NvrtcUncachedReason::compiled_before, "compiled_before"},
    {NvrtcUncachedReason::not_stored, "not_stored"},
    {NvrtcUncachedReason::internal_error, "internal_error"},
}};

struct NvrtcNoteRequest {
  NvrtcUncachedReason reason = NvrtcUncachedReason::unknown_option;
};

Payload encode(const NvrtcNoteRequest& m);
common::Result<NvrtcNoteRequest> decode_nvrtc_note_request(Bytes payload);

}  // namespace jitcache::proto
