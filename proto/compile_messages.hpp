// The COMPILE op's payloads (proto/PROTOCOL.md §5 COMPILE) and their codec: the request (the key
// without its content digest, a priority and the PTX), the compiled reply (origin + a LOOKUP hit's
// entry and image) and the compile_error reply (message + the compiler's log). The other refusals of
// a COMPILE (cannot_compile, busy, worker_failed) are plain error messages (messages.hpp).
//
// Like messages.hpp, decoders check every length before using it and return views into the payload
// for the PTX and the image. Thread safety: free functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <proto/messages.hpp>

namespace jitcache::proto {

// The largest compiler log a compile_error reply carries (the daemon cuts a longer one).
inline constexpr std::size_t k_max_compile_log_length = 1 << 20;

// Persisted on the wire: numbered explicitly, never reused.
enum class CompilePriority : std::uint8_t { interactive = 0, warm = 1 };
inline constexpr std::array<NamedValue<CompilePriority>, 2> k_compile_priorities{{
    {CompilePriority::interactive, "interactive"},
    {CompilePriority::warm, "warm"},
}};
enum class CompileOrigin : std::uint8_t { compiled = 0, stored = 1 };
inline constexpr std::array<NamedValue<CompileOrigin>, 2> k_compile_origins{{
    {CompileOrigin::compiled, "compiled"},
    {CompileOrigin::stored, "stored"},
}};

struct CompileRequest {
  std::uint16_t key_schema = k_key_schema_version;
  std::string arch;
  std::uint32_t driver_api = 0;
  std::string driver_build;
  std::string options;
  CompilePriority priority = CompilePriority::interactive;
  Bytes ptx;  // a view: into the received payload (daemon) or the caller's buffer (client)
};

struct CompileReply {
  CompileOrigin origin = CompileOrigin::compiled;
  EntryInfo info;
  Bytes image;  // a view into the decoded payload
};

struct CompileErrorReply {
  std::string message;  // one line, at most k_max_message_length
  std::string log;      // the compiler's log, at most k_max_compile_log_length
};

// The key a COMPILE names once the daemon has digested the PTX: every field of the request, and
// `content` (proto::content_digest of the PTX, computed by the caller of this function).
KeyFields key_of(const CompileRequest& request, const Digest256& content);

// Everything before the PTX bytes, which the client sends from its own buffer (as a PUT's image).
Payload encode_compile_request_head(const CompileRequest& m);
Payload encode(const CompileRequest& m);  // copies the PTX: for tests
// Refuses a priority other than 0 or 1. The PTX's own checks (empty, NUL bytes) are the daemon's.
common::Result<CompileRequest> decode_compile_request(Bytes payload);

// Everything of a compiled reply but the image bytes, which the daemon sends from its own buffer.
Payload encode_compile_reply_head(CompileOrigin origin, const EntryInfo& info, std::uint32_t image_size);
Payload encode(const CompileReply& m);  // copies the image: for tests
// Refuses an origin other than 0 or 1.
common::Result<CompileReply> decode_compile_reply(Bytes payload);

Payload encode(const CompileErrorReply& m);  // cuts the message and the log to their limits
common::Result<CompileErrorReply> decode_compile_error_reply(Bytes payload);

}  // namespace jitcache::proto
