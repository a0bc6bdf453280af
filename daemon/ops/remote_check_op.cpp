// REMOTE_CHECK (PROTOCOL.md §5): the fleet tier's remotes and keys, probed on request.
#include <daemon/ops/request_handler.hpp>

#include <spdlog/spdlog.h>

#include <optional>
#include <string>
#include <variant>

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

namespace jitcache::daemon::ops {

using proto::Op;
using proto::Status;
using stats::Counters;

Reply RequestHandler::remote_check(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  auto request = proto::decode_remote_check_request(payload);
  if (!request) return failure(request.error(), "REMOTE_CHECK");
  // Rationale: a probe is for trusted callers only, as GC and VERIFY: it writes to every remote with
  // this host's credentials and holds this worker thread for up to remote::k_probe_timeout. What the
  // daemon knows already (no probe) names no secret (a remote's name carries no password) and costs
  // nothing, so anyone may ask for it.
  if (request->probe && !visibility_for(peer).trusted) {
    return error_reply(Status::forbidden,
                       "REMOTE_CHECK's probe (jitcache remote check) is for root and the daemon's own user only; "
                       "jitcache remote status is for everyone");
  }
  proto::RemoteCheckReply reply = remote::check_remotes(m_counters.fleet, request->probe);
  if (request->probe) {
    for (std::size_t i = 0; i < reply.remotes.size(); ++i) {
      const proto::RemoteCheckRemote& r = reply.remotes[i];
      const bool well = r.reachable == proto::ProbeAnswer::yes && r.writable != proto::ProbeAnswer::no;
      spdlog::log(well ? spdlog::level::info : spdlog::level::warn,
                  "REMOTE_CHECK remote {} {}: reachable={} writable={} leases={} ping {} us{}{} peer {}", i, r.name,
                  proto::probe_answer_name(r.reachable), proto::probe_answer_name(r.writable),
                  proto::lease_support_name(r.leases), r.latency_us, r.message.empty() ? "" : ": ", r.message,
                  peer.describe());
    }
  }
  if (!reply.signing_message.empty()) spdlog::warn("REMOTE_CHECK signing self-test: {}", reply.signing_message);
  return ok_payload(reply);
}

}  // namespace jitcache::daemon::ops
