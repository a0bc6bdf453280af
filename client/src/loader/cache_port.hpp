// The cache as the load flow reaches it: the daemon's published copies (read from the directory
// beside its socket, no round trip) and the daemon itself (LOOKUP, COMPILE, PUT, REPORT_FAILURE
// over its socket). The flow decides what to ask; a port decides how the asking is done.
// DaemonCachePort (daemon_cache_port.hpp) is the real one; the flow's unit tests hand the flow a
// fake (tests/unit/test_client_loader_load_flow.cpp), which is why this is an interface.
//
// Errors: an Error with reply_status 0 is the daemon failing (refused, timed out, unreadable): the
// port has dropped the load's connection and put the daemon in back-off, and every later call of
// the load fails at once with ErrorCode::unavailable. An Error with a reply_status is the daemon's
// answer (busy, draining, bad_request, ...): the connection stays usable. One exception: a COMPILE
// that outlasts its wait (ErrorCode::timeout) drops the connection without a back-off, since the
// daemon is compiling, not dead.
// Thread safety: one port per load, used by that load's thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include <client/src/transport/daemon_client.hpp>
#include <proto/compile_messages.hpp>
#include <proto/key.hpp>
#include <proto/messages.hpp>

namespace jitcache::client::loader {

class CachePort {
 public:
  virtual ~CachePort() = default;

  // The published copy of the entry with this fast key, its file checked (owner, mode, format,
  // fast key, size, XXH3-128: transport/published_reader.hpp); nullopt when none is published; an
  // error when one is there but may not be used. The caller still checks the entry's key.
  virtual common::Result<std::optional<transport::FetchedImage>> read_published(const proto::FastKey& fast_key) = 0;
  // A hit served from a published copy, for the daemon to count (HIT_NOTE, sent off the load's path).
  virtual void note_published_hit(const proto::FastKey& fast_key) = 0;

  // Connects to the daemon unless the load already holds a connection; the error says why the
  // daemon cannot be used (asked once per load: a failed connect is not retried).
  virtual common::Result<void> connect() = 0;
  // The daemon's capability bits when they are known without a round trip (this connection's
  // HELLO already answered); nullopt otherwise.
  virtual std::optional<std::uint64_t> known_capabilities() const = 0;
  // The capability bits, sending HELLO when they are not known yet.
  virtual common::Result<std::uint64_t> capabilities() = 0;

  // LOOKUP by fast key (selector 2) or by key (selector 0); nullopt is not_found.
  virtual common::Result<std::optional<transport::FetchedImage>> lookup_fast(const proto::FastKey& fast_key,
                                                                             transport::ImageDelivery delivery) = 0;
  virtual common::Result<std::optional<transport::FetchedImage>> lookup(const proto::KeyFields& key,
                                                                        transport::ImageDelivery delivery) = 0;
  virtual common::Result<transport::CompileAnswer> compile(const proto::CompileRequest& request,
                                                           std::chrono::milliseconds wait) = 0;
  virtual common::Result<void> put(const proto::PutRequest& request) = 0;
  virtual common::Result<void> report_failure(const proto::ReportFailureRequest& request) = 0;
  // NVRTC_NOTE: an NVRTC compile that was NVRTC's own, for the daemon to count; sent only when the
  // daemon offers it (proto::k_capability_nvrtc_note). Nothing the caller waits on depends on it.
  virtual common::Result<void> note_nvrtc_uncached(proto::NvrtcUncachedReason reason) = 0;
  // NVRTC_COMPILE: the daemon compiles an NVRTC program with its own NVRTC. ErrorCode::unsupported
  // (no reply_status) when the daemon does not offer it; a timeout drops the connection as COMPILE's.
  virtual common::Result<proto::NvrtcCompileReply> nvrtc_compile(const proto::NvrtcCompileRequest& request,
                                                                 std::chrono::milliseconds wait) = 0;
};

}  // namespace jitcache::client::loader
