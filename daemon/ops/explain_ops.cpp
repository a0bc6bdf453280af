// EXPLAIN and MISSES (PROTOCOL.md §5): why a key misses, and the recent misses (explain_request.hpp).
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

Reply RequestHandler::explain(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  auto request = proto::decode_explain_request(payload);
  if (!request) return failure(request.error(), "EXPLAIN");
  if (request->selector == proto::ExplainSelector::key) {
    if (auto valid = proto::validate_key(request->key); !valid) return failure(valid.error(), "EXPLAIN");
  }
  const ExplainSources sources{m_stores.diagnosis, m_counters.recent_misses,
                               m_compile != nullptr ? &m_compile->service() : nullptr};
  auto reply = ops::explain(sources, *request, visibility_for(peer), static_cast<std::uint32_t>(peer.uid));
  if (!reply) return failure(reply.error(), "EXPLAIN");
  Counters::add(m_counters.explains);
  return ok_payload(*reply);
}

Reply RequestHandler::misses(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  auto request = proto::decode_misses_request(payload);
  if (!request) return failure(request.error(), "MISSES");
  const ExplainSources sources{m_stores.diagnosis, m_counters.recent_misses,
                               m_compile != nullptr ? &m_compile->service() : nullptr};
  return ok_payload(recent_misses(sources, request->limit, visibility_for(peer), static_cast<std::uint32_t>(peer.uid)));
}

}  // namespace jitcache::daemon::ops
