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

#include <proto/link_content.hpp>
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

// The most inputs one COMPILE of a link may carry (PROTOCOL.md §5 COMPILE "Link inputs").
inline constexpr std::size_t k_max_compile_link_inputs = 256;

// One input of a link the daemon is asked to compile (capability bit 9): a view, like `ptx`.
struct CompileLinkInput {
  LinkInputKind kind = LinkInputKind::ptx;
  Bytes data;
};

struct CompileRequest {
  std::uint16_t key_schema = k_key_schema_version;
  std::string arch;
  std::uint32_t driver_api = 0;
  std::string driver_build;
  std::string options;
  CompilePriority priority = CompilePriority::interactive;
  Bytes ptx;  // a view: into the received payload (daemon) or the caller's buffer (client)
  // A link's inputs, in order (capability bit 9, compile_link): then `ptx` is empty and `options`
  // names an nvJitLink link (jit_options.hpp link_flavor). Empty for a module's COMPILE.
  std::vector<CompileLinkInput> link_inputs;
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
// With link inputs the PTX is empty and the head holds the whole request, the inputs copied in.
Payload encode_compile_request_head(const CompileRequest& m);
Payload encode(const CompileRequest& m);  // copies the PTX: for tests
// Refuses a priority other than 0 or 1; a link_count of 0 or above k_max_compile_link_inputs, an
// unknown input kind, and link inputs beside a non-empty PTX. The PTX's own checks (empty, NUL
// bytes) are the daemon's.
common::Result<CompileRequest> decode_compile_request(Bytes payload);
// The link content digest of a request's link inputs (link_content.hpp; nvJitLink inputs take no
// options), and its fast counterpart.
Digest256 link_content_of(const CompileRequest& request);
Checksum128 link_content_fast_of(const CompileRequest& request);

// Everything of a compiled reply but the image bytes, which the daemon sends from its own buffer.
Payload encode_compile_reply_head(CompileOrigin origin, const EntryInfo& info, std::uint32_t image_size);
Payload encode(const CompileReply& m);  // copies the image: for tests
// Refuses an origin other than 0 or 1.
common::Result<CompileReply> decode_compile_reply(Bytes payload);

Payload encode(const CompileErrorReply& m);  // cuts the message and the log to their limits
common::Result<CompileErrorReply> decode_compile_error_reply(Bytes payload);

}  // namespace jitcache::proto
