// The COMPILE op (PROTOCOL.md §5 COMPILE) around the compile service: what runs before it (decode,
// digest the PTX, validate the key, look it up) and what turns its outcome into a reply. The
// connection awaits the compile itself (async_compile) between the two, so no worker thread waits
// for a compile.
//
// The daemon computes the key's content digest and the fast key's content from the PTX it received
// (a link's: from its inputs, proto/link_content.hpp); a digest from the client is never trusted
// (the request carries none). An entry the caller would
// find by LOOKUP is answered at once (origin `stored`), which also spares a compile to a request that
// arrives after a compile of its key finished and was stored.
// Thread safety: begin() and finish() may run on many threads at once (the store, the counters, the
// sink and the service are thread-safe).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <daemon/compile/async_compile.hpp>
#include <daemon/compile/compile_service.hpp>
#include <daemon/compile_store/ask_watcher.hpp>
#include <daemon/compile_store/compile_store_sink.hpp>
#include <daemon/ops/reply.hpp>
#include <daemon/policy/peer_credentials.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/store.hpp>
#include <proto/compile_messages.hpp>
#include <proto/nvrtc_key.hpp>

namespace jitcache::daemon::ops {

// A request the compile service must answer. input.ptx views the request's payload, which the
// connection hands to async_compile to free once the service has taken what it keeps: after that,
// only key_id, key and priority are valid.
struct PendingCompile {
  proto::Digest256 key_id;
  proto::KeyFields key;
  compile::CompileInput input;
  // A link's inputs (views into the payload, as input.ptx), which input.link_inputs points at: on the
  // heap, so that the span stays valid however the PendingCompile is moved or copied.
  std::shared_ptr<const std::vector<proto::CompileLinkInput>> link_inputs;
  compile::Priority priority = compile::Priority::interactive;
};

// An NVRTC_COMPILE the compile service must answer (nvrtc_compile_request.cpp). The job lives on
// the heap, so input.nvrtc stays valid however the pending compile is moved or copied.
struct PendingNvrtcCompile {
  proto::Digest256 key_id;
  proto::KeyFields key;
  std::shared_ptr<const compile::NvrtcJob> job;
  compile::CompileInput input;
};

// The NVRTC the daemon compiles with: the configured library and the identity its probe reported.
struct DaemonNvrtc {
  std::string library;
  proto::NvrtcIdentity identity;
};

class CompileRequests {
 public:
  // `max_ptx_bytes`: a larger PTX is `too_large` (config key compile_max_ptx).
  CompileRequests(store::Store& store, stats::Counters& counters, compile::CompileService& service,
                  compile_store::CompileStoreSink& sink, std::uint64_t max_ptx_bytes)
      : m_store(store), m_counters(counters), m_service(service), m_sink(sink), m_max_ptx_bytes(max_ptx_bytes) {}

  // A reply now (a bad request, an entry already stored, a store failure), or a compile to await.
  // A PendingCompile must be followed by finish(), whatever the compile's result.
  std::variant<Reply, PendingCompile> begin(proto::Bytes payload, const store::Visibility& who,
                                            const policy::PeerCredentials& peer);
  Reply finish(const PendingCompile& pending, const compile::CompileResult& result);

  compile::CompileService& service() { return m_service; }

  // NVRTC_COMPILE (PROTOCOL.md §5 NVRTC_COMPILE), offered once enable_nvrtc() named the NVRTC the
  // worker's probe accepted; call it before the server serves. The daemon recomputes the key from
  // the program and its own NVRTC's identity, decides eligibility itself
  // (proto/nvrtc_daemon_eligibility.hpp), refuses a request whose claimed key is not that key (so no
  // request plants an entry under a key of its choosing), answers a stored result at once, and
  // otherwise hands the compile to the service like a COMPILE (same single flight, per-uid queue and
  // limits); the result goes to the shared namespace (docs/security.md "NVRTC compiles").
  void enable_nvrtc(DaemonNvrtc nvrtc) { m_nvrtc = std::move(nvrtc); }
  const std::optional<DaemonNvrtc>& nvrtc() const { return m_nvrtc; }
  std::variant<Reply, PendingNvrtcCompile> begin_nvrtc(proto::Bytes payload, const store::Visibility& who,
                                                       const policy::PeerCredentials& peer);
  Reply finish_nvrtc(const PendingNvrtcCompile& pending, const compile::CompileResult& result);

  // Who is told the arch and driver of every key asked for (LOOKUP and COMPILE); null: nobody. Set
  // it before the server serves, or clear it once the server has stopped.
  void watch_asks(compile_store::AskWatcher* watcher) { m_watcher.store(watcher, std::memory_order_release); }
  // A LOOKUP or COMPILE asked for a key of this arch and driver (whether or not it is stored).
  void note_asked(const std::string& arch, std::uint32_t driver_api, const std::string& driver_build,
                  const store::Visibility& who) {
    if (compile_store::AskWatcher* watcher = m_watcher.load(std::memory_order_acquire)) {
      watcher->asked(arch, driver_api, driver_build,
                     who.trusted ? std::nullopt : std::optional<std::uint32_t>(who.own_namespace));
    }
  }

 private:
  Reply answer(const PendingCompile& pending, const compile::CompileOutcome& outcome);

  store::Store& m_store;
  stats::Counters& m_counters;
  compile::CompileService& m_service;
  compile_store::CompileStoreSink& m_sink;
  const std::uint64_t m_max_ptx_bytes;
  std::optional<DaemonNvrtc> m_nvrtc;
  std::atomic<compile_store::AskWatcher*> m_watcher{nullptr};
};

// `worker_failed` for a compile whose worker failed (COMPILE and NVRTC_COMPILE answer it alike).
Reply worker_failed_reply(const compile::CompileOutcome& outcome);

}  // namespace jitcache::daemon::ops
