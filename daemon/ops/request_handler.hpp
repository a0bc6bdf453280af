// The ops' handlers: each turns one request into one reply (decode, check, call the store, encode),
// and the checks and counting every op shares. It holds no connection state, so the server runs each
// handler where its op table row says (op_table.hpp): reads on the worker thread that serves the
// connection, writes on the single writer thread; never on the accept loop.
// It reaches the store only through its interfaces (store_set.hpp), so whatever implements them
// (the SQLite store, a tiered store in front of it) serves without a change here.
// Thread safety: every method may run on many threads at once; the store and Counters are thread-safe.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <daemon/ops/op_call.hpp>
#include <daemon/ops/op_table.hpp>
#include <daemon/ops/reply.hpp>
#include <daemon/policy/peer_credentials.hpp>
#include <daemon/policy/report_rate_limiter.hpp>
#include <daemon/policy/trust_policy.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/store_set.hpp>
#include <proto/messages.hpp>

namespace jitcache::daemon::publish {
class Publisher;
}

namespace jitcache::daemon::ops {

class CompileRequests;
class BundleService;

// Who is trusted and how often an untrusted uid may report failures (docs/security.md). The
// defaults trust root and the daemon's own uid and limit nothing: a handler for tests.
struct TenantPolicy {
  policy::TrustPolicy trust{::geteuid()};
  unsigned reports_per_minute = 0;
};

class RequestHandler {
 public:
  // `compile`: the COMPILE op, or null when the daemon cannot compile (capability bit 1 clear, and
  // COMPILE answered "not implemented"). `publisher`: the published images, or null when publishing
  // is off; LOOKUP and PUT offer it entries, HIT_NOTE tells it of use. `bundles`: EXPORT_BUNDLE and
  // IMPORT_BUNDLE, or null when they are not offered. All must outlive the handler.
  RequestHandler(store::StoreSet stores, stats::Counters& counters, std::uint64_t max_frame_bytes,
                 CompileRequests* compile = nullptr, publish::Publisher* publisher = nullptr, TenantPolicy tenants = {},
                 BundleService* bundles = nullptr);

  // A request answered here, whatever its row's lane, for an op whose handler is not asynchronous:
  // the checks of refusal(), the handler, counted(). `flags`: the request header's (PROTOCOL.md
  // §2); a LOOKUP's reply is encoded for the delivery they ask for.
  Reply handle(proto::Op op, proto::Bytes payload, const policy::PeerCredentials& peer, std::uint16_t flags = 0);

  // The checks every op shares, from its row (op_table.hpp): an op without a row or one this
  // daemon does not offer is `bad_request`, a trusted op from an untrusted caller `forbidden`, an
  // op that needs a descriptor and has none `bad_request`. nullopt: the call may go to its handler.
  std::optional<Reply> refusal(const OpRow* row, const OpCall& call) const;
  // Every request is counted once when it starts (so a STATS counts itself), and its error status
  // once it is answered.
  void count_request();
  Reply counted(Reply reply);

  // Whether this daemon serves ops of `needs`.
  bool offers(Needs needs) const;
  // The capability bits HELLO announces: those of every row (and feature) this daemon offers.
  std::uint64_t capabilities() const;

  // Who may see and write what (docs/security.md "What is enforced"): trusted peers (TrustPolicy)
  // write the shared namespace; everyone else writes the namespace of their uid.
  store::Visibility visibility_for(const policy::PeerCredentials& peer) const;

  // The handlers of the op table's rows, each in a file of its own op: lookup_op.cpp, put_op.cpp,
  // store_ops.cpp (STATS, LIST, REMOVE, GC, VERIFY), compile_op.cpp, report_failure_op.cpp,
  // hit_note_op.cpp, remote_check_op.cpp, explain_ops.cpp, bundle_ops.cpp, nvrtc_note_op.cpp,
  // nvrtc_compile_op.cpp; HELLO and PING
  // here.
  Reply hello(OpCall& call);
  Reply ping(OpCall& call);
  Reply lookup(OpCall& call);
  Reply put(OpCall& call);
  Reply stats(OpCall& call);
  Reply list(OpCall& call);
  Reply remove(OpCall& call);
  boost::asio::awaitable<Reply> compile(OpCall& call);
  Reply report_failure(OpCall& call);
  Reply gc(OpCall& call);
  Reply verify(OpCall& call);
  Reply hit_note(OpCall& call);
  Reply remote_check(OpCall& call);
  Reply explain(OpCall& call);
  Reply misses(OpCall& call);
  Reply export_bundle(OpCall& call);
  Reply import_bundle(OpCall& call);
  Reply nvrtc_note(OpCall& call);
  boost::asio::awaitable<Reply> nvrtc_compile(OpCall& call);

 private:
  store::StoreSet m_stores;
  stats::Counters& m_counters;
  std::uint64_t m_max_frame_bytes;
  policy::TrustPolicy m_trust;
  policy::ReportRateLimiter m_report_limiter;
  CompileRequests* m_compile;
  publish::Publisher* m_publisher;
  BundleService* m_bundles;
};

}  // namespace jitcache::daemon::ops
