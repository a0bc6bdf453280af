// Turns one request payload into one reply: decode, check, call the store, encode. It holds no
// connection state, so the server runs it where the op belongs (lane_for): reads on the worker thread
// that serves the connection, writes on the single writer thread; never on the accept loop.
// It reaches the store only through its interfaces (store_set.hpp), so whatever implements them
// (the SQLite store, a tiered store in front of it) serves without a change here.
// Thread safety: handle() may run on many threads at once; the store and Counters are thread-safe.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <daemon/policy/peer_credentials.hpp>
#include <daemon/policy/report_rate_limiter.hpp>
#include <daemon/policy/trust_policy.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/store_set.hpp>
#include <proto/messages.hpp>

namespace jitcache::daemon::publish {
class Publisher;
}

namespace jitcache::daemon::server {

// Rationale: an image below this goes as bytes even when the request asks for a descriptor:
// streaming it costs less than a memfd and a mapping on each side (docs/benchmarks.md).
inline constexpr std::size_t k_min_image_by_descriptor = 64 << 10;

struct Reply {
  proto::Status status = proto::Status::ok;
  proto::Payload payload;  // the reply payload, or the error message when status is not ok
  // Sent right after `payload` (a LOOKUP hit's image, straight from the store's buffer, which the
  // store's hot image cache may share with other replies), or as a descriptor (below).
  std::shared_ptr<const store::ImageBuffer> image;
  // A LOOKUP hit to a request with proto::k_flag_image_fd whose image is worth a descriptor:
  // `payload` is then a LookupReplyByDescriptor and `image` goes as a sealed memfd
  // (connection.cpp); image_as_bytes() makes the reply that sends it as bytes instead.
  bool image_by_descriptor = false;
};

// `reply` (image_by_descriptor) as the reply that sends its image as bytes after the head, for when
// no descriptor can be made. Only on that rare path is a second head encoded.
Reply image_as_bytes(const Reply& reply);

// Where an op's work runs: on the connection's worker thread (reads, which SQLite's WAL lets run in
// parallel, each worker with its own read connection), on the one writer thread (PUT, REMOVE,
// REPORT_FAILURE, GC), or on the one maintenance thread (VERIFY: long, mostly reads, with short
// writes of its own; there it holds up neither a worker's other connections nor the PUTs), or on
// the diagnosis lane (EXPLAIN, MISSES: diagnosis_lane.hpp), never in front of a LOOKUP.
enum class Lane { worker, writer, maintenance, diagnosis };
Lane lane_for(proto::Op op);

class CompileRequests;

// Who is trusted and how often an untrusted uid may report failures (docs/security.md). The
// defaults trust root and the daemon's own uid and limit nothing: a handler for tests.
struct TenantPolicy {
  policy::TrustPolicy trust{::geteuid()};
  unsigned reports_per_minute = 0;
};

class RequestHandler {
 public:
  // `compile`: the COMPILE op, or null when the daemon cannot compile (capability bit 1 clear, and
  // COMPILE answered "not implemented"). COMPILE itself is served by the connection (it awaits the
  // compile); the handler announces it in HELLO and reports its counters in STATS. `publisher`:
  // the published images, or null when publishing is off; LOOKUP and PUT offer it entries,
  // HIT_NOTE tells it of use. `bundles`: the server's connections serve EXPORT_BUNDLE and
  // IMPORT_BUNDLE (bundle_service.hpp), which HELLO then announces.
  // `stores` must outlive the handler.
  RequestHandler(store::StoreSet stores, stats::Counters& counters, std::uint64_t max_frame_bytes,
                 CompileRequests* compile = nullptr, publish::Publisher* publisher = nullptr, TenantPolicy tenants = {},
                 bool bundles = false);

  // `flags`: the request header's (PROTOCOL.md §2); a LOOKUP's reply is encoded for the delivery
  // they ask for.
  Reply handle(proto::Op op, proto::Bytes payload, const policy::PeerCredentials& peer, std::uint16_t flags = 0);

  // Who may see and write what (docs/security.md "What is enforced"): trusted peers (TrustPolicy)
  // write the shared namespace; everyone else writes the namespace of their uid.
  store::Visibility visibility_for(const policy::PeerCredentials& peer) const;

 private:
  Reply hello(proto::Bytes payload);
  Reply lookup(proto::Bytes payload, const policy::PeerCredentials& peer, std::uint16_t flags);
  Reply put(proto::Bytes payload, const policy::PeerCredentials& peer);
  Reply stats(proto::Bytes payload);
  Reply list(proto::Bytes payload, const policy::PeerCredentials& peer);
  Reply gc(proto::Bytes payload, const policy::PeerCredentials& peer);
  Reply verify(proto::Bytes payload, const policy::PeerCredentials& peer);
  Reply remove(proto::Bytes payload, const policy::PeerCredentials& peer);
  Reply report_failure(proto::Bytes payload, const policy::PeerCredentials& peer);
  Reply hit_note(proto::Bytes payload);
  Reply remote_check(proto::Bytes payload, const policy::PeerCredentials& peer);
  Reply explain(proto::Bytes payload, const policy::PeerCredentials& peer);
  Reply misses(proto::Bytes payload, const policy::PeerCredentials& peer);

  store::StoreSet m_stores;
  stats::Counters& m_counters;
  std::uint64_t m_max_frame_bytes;
  policy::TrustPolicy m_trust;
  policy::ReportRateLimiter m_report_limiter;
  CompileRequests* m_compile;
  publish::Publisher* m_publisher;
  bool m_bundles;  // the connection serves EXPORT_BUNDLE and IMPORT_BUNDLE (capability bit 12)
};

// An error reply; also used by the connection for frames it refuses.
Reply error_reply(proto::Status status, std::string_view message);
// The reply status for a failed store or decode call (proto::status_for, proto/status_codes.hpp).
proto::Status status_for(const common::Error& error);

}  // namespace jitcache::daemon::server
