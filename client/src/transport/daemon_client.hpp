// Typed calls to jitcached: one method per protocol op, statuses mapped to Result errors.
//
// A non-ok reply becomes an Error whose code follows the status (proto::error_code_for, the one
// table in proto/status_codes.hpp: not_found → ErrorCode::not_found, forbidden → forbidden, busy
// and unavailable → unavailable, …) and whose message is the daemon's own, prefixed by the status
// name; Error::reply_status carries the status itself. A LOOKUP miss is not an error:
// lookup() returns std::nullopt, and so does report_failure() for a key the daemon has no entry for.
//
// Restarts (docs/operations.md "Restarts"): when the daemon closes or resets the connection under a
// call, or answers `unavailable` (a draining daemon past its limit, a store that cannot serve now),
// the request is sent once more on a fresh connection (ConnectOptions::restart_wait applies to that
// connect) — any request lost while being sent (the daemon cannot have run it), and, lost after it
// was sent or answered `unavailable`, only one that is safe to run twice (repeatable_after_loss).
// A timeout is never retried: a hung daemon would cost the caller its wait twice.
// Thread safety: one object per thread (it owns one connection).
#pragma once

#include <optional>
#include <vector>

#include <client/src/transport/mapped_image.hpp>
#include <client/src/transport/unix_connection.hpp>
#include <proto/bundle_messages.hpp>
#include <proto/compile_messages.hpp>
#include <proto/explain_messages.hpp>
#include <proto/messages.hpp>
#include <proto/nvrtc_compile_messages.hpp>
#include <proto/nvrtc_note_messages.hpp>
#include <proto/remote_check_messages.hpp>

namespace jitcache::client::transport {

// How a LOOKUP asks for its image: streamed through the socket, or (from a daemon with
// proto::k_capability_image_fd) as a sealed memfd the client maps — cheaper for large images.
enum class ImageDelivery { bytes, descriptor_if_large };

// A LOOKUP hit with the image in its own buffer or mapping; its bytes are checked against info.checksum.
struct FetchedImage {
  proto::EntryInfo info;
  ByteBuffer image;    // the image received as bytes
  MappedImage mapped;  // or the image mapped: received as a descriptor, or a large published file
  proto::Bytes bytes() const { return mapped.mapped() ? mapped.bytes() : proto::Bytes(image); }
  // Set by DaemonClient::lookup*, which checks size and XXH3-128 before returning, so the caller
  // need not hash a megabyte again (a cache hit's latency budget is a few milliseconds).
  bool checksum_verified = false;
};

// What a COMPILE came to (PROTOCOL.md §5 COMPILE). Statuses other than these (bad_request,
// too_large, internal, …) and transport failures are errors of DaemonClient::compile.
struct CompileAnswer {
  enum class Kind { compiled, compile_error, cannot_compile, busy, worker_failed };
  Kind kind = Kind::compiled;
  std::optional<FetchedImage> image;  // compiled: checked against its size and checksum
  bool from_store = false;            // compiled: the entry was already stored (origin 1)
  std::string message;                // every other kind: the daemon's message
  std::string log;                    // compile_error: the compiler's full log
};
std::string_view compile_answer_name(CompileAnswer::Kind kind);  // "compiled", "cannot_compile", ...

// Whether a request whose reply was lost may be sent again: its effect is the same when it runs
// twice. Read-only ops (HELLO, PING, LOOKUP, STATS, LIST, REMOTE_CHECK: its probe removes what it
// wrote, under ids of its own); COMPILE (single-flight: a second request
// joins the compile or finds its result stored); PUT (the same bytes under the same key: a second
// store replaces the entry with itself, its reply then says `replaced`); REPORT_FAILURE (a second
// report by one uid changes nothing but the entry's load_failures count, and a lost report would
// leave a bad image served to others). Not REMOVE (the second answers not_found although the first
// removed), GC and VERIFY (operator commands whose figures would be the second run's; VERIFY reads
// the whole store again), HIT_NOTE (a second note counts the hit twice).
bool repeatable_after_loss(proto::Op op);

class DaemonClient {
 public:
  static Result<DaemonClient> connect(const ConnectOptions& options);

  // Also sizes the connection's reply limit to what this daemon may send (its max_frame_bytes plus
  // room for the entry metadata), so images larger than the client's default can be fetched.
  Result<proto::HelloReply> hello(const std::string& client_name);
  Result<void> ping();
  Result<std::optional<FetchedImage>> lookup(const proto::KeyFields& key,
                                             ImageDelivery delivery = ImageDelivery::bytes);
  Result<std::optional<FetchedImage>> lookup_by_id(const std::string& key_id_prefix);
  // LOOKUP selector 2. The entry found must still have its content digest checked against the
  // caller's own (proto::FastKey). A daemon without k_capability_fast_key answers bad_request.
  Result<std::optional<FetchedImage>> lookup_fast(const proto::FastKey& key,
                                                  ImageDelivery delivery = ImageDelivery::bytes);
  Result<proto::PutReply> put(const proto::PutRequest& request);
  Result<proto::StatsReply> stats();
  Result<proto::ListReply> list(const proto::ListRequest& request);
  Result<proto::RemoveReply> remove(const std::string& key_id_prefix);
  // GC: eviction now. Send it only to a daemon whose HELLO set proto::k_capability_gc. The daemon
  // answers an untrusted caller `forbidden` (Error::reply_status; ErrorCode::forbidden).
  Result<proto::GcReply> gc();
  // VERIFY: a full check of the store, waiting up to `timeout` (it reads every image). Send it only
  // to a daemon whose HELLO set proto::k_capability_verify; untrusted callers get `forbidden`.
  Result<proto::VerifyReply> verify(std::chrono::milliseconds timeout);
  // Tells the daemon that an image it served failed to load, so it quarantines the entry for every
  // client. Send it only to a daemon whose HELLO set proto::k_capability_report_failure.
  Result<std::optional<proto::ReportFailureReply>> report_failure(const proto::ReportFailureRequest& request);

  // REMOTE_CHECK (op 13): the daemon's remotes and signing keys; with `probe`, each remote probed
  // now (a few seconds at most). Send it only to a daemon whose HELLO set
  // proto::k_capability_remote_check; a probe by an untrusted caller is answered `forbidden`.
  Result<proto::RemoteCheckReply> remote_check(bool probe);
  // EXPORT_BUNDLE into `fd` (an empty regular file open for writing) and IMPORT_BUNDLE from `fd` (a
  // regular file open for reading): the daemon reads or writes the file itself (PROTOCOL.md §5).
  // `timeout`: how long the daemon may take, a bundle of hundreds of MB included.
  Result<proto::ExportBundleReply> export_bundle(const proto::ExportBundleRequest& request, int fd,
                                                 std::chrono::milliseconds timeout);
  Result<proto::ImportBundleReply> import_bundle(const proto::ImportBundleRequest& request, int fd,
                                                 std::chrono::milliseconds timeout);

  // EXPLAIN (op 14): why the key (or key id) would miss, as the daemon sees it now; MISSES (op 15):
  // its recent misses and evictions. Send them only to a daemon whose HELLO set
  // proto::k_capability_explain.
  Result<proto::ExplainReply> explain(const proto::ExplainRequest& request);
  Result<proto::MissesReply> misses(std::uint32_t limit);

  // HIT_NOTE (op 12): tells the daemon that the published copy of the entry with this fast key
  // was loaded; ok once the daemon has counted it.
  Result<void> hit_note(const proto::FastKey& fast_key);
  // NVRTC_NOTE: an NVRTC compile this client could not cache, and why. Send it only to a daemon
  // whose HELLO set proto::k_capability_nvrtc_note.
  Result<void> nvrtc_note(proto::NvrtcUncachedReason reason);
  // NVRTC_COMPILE: the daemon compiles the program with its own NVRTC, waiting up to `timeout`.
  // Send it only to a daemon whose HELLO set proto::k_capability_nvrtc_compile; a refusal
  // (cannot_compile: not eligible, another NVRTC) is an Error with its reply_status.
  Result<proto::NvrtcCompileReply> nvrtc_compile(const proto::NvrtcCompileRequest& request,
                                                 std::chrono::milliseconds timeout);

  // COMPILE, waiting up to `timeout` for the answer (a compile takes seconds). Send it only to a
  // daemon whose HELLO set proto::k_capability_compile.
  Result<CompileAnswer> compile(const proto::CompileRequest& request, std::chrono::milliseconds timeout);

  UnixConnection& connection() { return m_connection; }

 private:
  explicit DaemonClient(UnixConnection connection) : m_connection(std::move(connection)) {}
  // One request and its reply, sent once more on a fresh connection when the first was lost to a
  // closing daemon (see the header comment).
  Result<Reply> exchange(proto::Op op, const proto::Payload& payload, Bytes tail = {}, Bytes trailer = {},
                         std::uint16_t flags = 0, std::chrono::milliseconds timeout = {});
  // The reply's payload when its status is ok, else the mapped error.
  Result<Reply> ok_reply(proto::Op op, const proto::Payload& payload, Bytes tail = {}, Bytes trailer = {},
                         std::uint16_t flags = 0);
  Result<std::optional<FetchedImage>> lookup_with(const proto::LookupRequest& request, ImageDelivery delivery);
  common::Error status_error(const Reply& reply);

  UnixConnection m_connection;
};

}  // namespace jitcache::client::transport
