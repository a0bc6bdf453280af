#include <daemon/ops/request_handler.hpp>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <optional>
#include <variant>

#include <daemon/ops/bundle_service.hpp>
#include <daemon/ops/compile_request.hpp>
#include <daemon/ops/explain_request.hpp>
#include <daemon/ops/image_check.hpp>
#include <daemon/ops/miss_record.hpp>
#include <daemon/ops/op_replies.hpp>
#include <daemon/publish/publisher.hpp>
#include <daemon/remote/defer_remote.hpp>
#include <daemon/remote/remote_check.hpp>
#include <daemon/stats/counter_table.hpp>
#include <daemon/stats/store_space.hpp>
#include <daemon/store/verify.hpp>
#include <proto/explain_messages.hpp>
#include <proto/remote_check_messages.hpp>
#include <proto/status_codes.hpp>

namespace jitcache::daemon::ops {

using proto::Op;
using proto::Status;
using stats::Counters;

RequestHandler::RequestHandler(store::StoreSet stores, Counters& counters, std::uint64_t max_frame_bytes,
                               CompileRequests* compile, publish::Publisher* publisher, TenantPolicy tenants,
                               BundleService* bundles)
    : m_stores(stores),
      m_counters(counters),
      m_max_frame_bytes(max_frame_bytes),
      m_trust(std::move(tenants.trust)),
      m_report_limiter(tenants.reports_per_minute),
      m_compile(compile),
      m_publisher(publisher),
      m_bundles(bundles) {}

store::Visibility RequestHandler::visibility_for(const policy::PeerCredentials& peer) const {
  const bool trusted = m_trust.trusts(peer);
  return store::Visibility{trusted ? store::k_shared_namespace : static_cast<std::uint32_t>(peer.uid), trusted};
}

Reply RequestHandler::handle(Op op, proto::Bytes payload, const policy::PeerCredentials& peer, std::uint16_t flags) {
  std::vector<std::uint8_t> no_bytes;
  policy::RequestBytesBudget::Hold no_budget;
  OpCall call{op, flags, peer, no_bytes, payload, no_budget, {}};
  count_request();
  const OpRow* row = find_op(op);
  if (auto refused = refusal(row, call)) return counted(std::move(*refused));
  if (row->handler == nullptr) {
    return counted(error_reply(Status::internal, std::string(proto::op_name(op)) + " must be awaited, not handled"));
  }
  return counted((this->*row->handler)(call));
}

std::optional<Reply> RequestHandler::refusal(const OpRow* row, const OpCall& call) const {
  const auto number = static_cast<std::uint16_t>(call.op);
  const std::string name(proto::op_name(call.op));
  if (row == nullptr) {
    return proto::is_known_op(number) && call.op != Op::none
               ? error_reply(Status::bad_request,
                             "op " + std::to_string(number) + " (" + name + ") is not implemented by this daemon")
               : error_reply(Status::bad_request, "op " + std::to_string(number) + " is not a jitcache op");
  }
  if (!offers(row->needs)) {
    return error_reply(Status::bad_request,
                       "op " + std::to_string(number) + " (" + name + ") is not implemented by this daemon");
  }
  // Rationale: GC and VERIFY are for trusted callers only. GC removes only what the capacity
  // policy would remove anyway, but it holds the single writer for as long as it runs and evicts
  // every tenant's entries; VERIFY reads every image of every tenant and removes what fails, a full
  // read of the store. Both are an operator's lever (`jitcache gc`, `jitcache verify` as root or as
  // the daemon's user), not a tenant's.
  if (row->caller == Caller::trusted && !m_trust.trusts(call.peer)) {
    return error_reply(Status::forbidden, name + " is for root and the daemon's own user only");
  }
  if (row->needs_descriptor && !call.descriptor) {
    return error_reply(Status::bad_request, name +
                                                " needs a file as a descriptor on the request's first byte "
                                                "(header flag request_fd, PROTOCOL.md §2)");
  }
  return std::nullopt;
}

void RequestHandler::count_request() { Counters::add(m_counters.requests); }

Reply RequestHandler::counted(Reply reply) {
  if (reply.status != Status::ok) m_counters.count_error(reply.status);
  return reply;
}

bool RequestHandler::offers(Needs needs) const {
  switch (needs) {
    case Needs::nothing: return true;
    case Needs::compile_service: return m_compile != nullptr;
    case Needs::link_compiler: return m_compile != nullptr && m_compile->service().compiles_links();
    case Needs::bundle_service: return m_bundles != nullptr;
    case Needs::nvrtc_compiler: return m_compile != nullptr && m_compile->nvrtc().has_value();
  }
  return false;
}

std::uint64_t RequestHandler::capabilities() const {
  std::uint64_t bits = 0;
  for (const OpRow& row : op_table()) {
    if (!offers(row.needs)) continue;
    bits |= row.capability;
    for (const Feature& feature : row.features) {
      if (feature.bit != 0 && offers(feature.needs)) bits |= feature.bit;
    }
  }
  return bits;
}

Reply RequestHandler::ping(OpCall& call) {
  auto empty = proto::decode_empty(call.payload, "PING");
  return empty ? Reply{} : failure(empty.error(), "PING");
}

Reply RequestHandler::hello(OpCall& call) {
  const proto::Bytes payload = call.payload;
  auto request = proto::decode_hello_request(payload);
  if (!request) return failure(request.error(), "HELLO");
  if (request->min_version > proto::k_protocol_version || request->max_version < proto::k_protocol_version) {
    return error_reply(Status::bad_request, "client speaks protocol versions " + std::to_string(request->min_version) +
                                                ".." + std::to_string(request->max_version) + "; this daemon speaks " +
                                                std::to_string(proto::k_protocol_version));
  }
  proto::HelloReply reply;
  reply.version = proto::k_protocol_version;
  reply.capabilities = capabilities();
  reply.daemon_version = "jitcached " JITCACHE_VERSION;
  reply.max_frame_bytes = m_max_frame_bytes;
  return ok_payload(reply);
}

}  // namespace jitcache::daemon::ops
