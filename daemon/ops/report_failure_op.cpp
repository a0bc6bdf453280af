// REPORT_FAILURE (PROTOCOL.md §5): a client reports that a served image failed to load
// (store/quarantine.hpp).
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

Reply RequestHandler::report_failure(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  auto request = proto::decode_report_failure_request(payload);
  if (!request) return failure(request.error(), "REPORT_FAILURE");
  if (auto valid = proto::validate_key(request->key); !valid) return failure(valid.error(), "REPORT_FAILURE");

  // A trusted caller's word quarantines a shared entry; an untrusted one's hides it from that caller
  // only, until report_quorum uids agree (store/quarantine.hpp says why).
  const store::Visibility who = visibility_for(peer);
  if (!who.trusted && !m_report_limiter.allow(peer.uid)) {
    Counters::add(m_counters.reports_rate_limited);
    return error_reply(Status::busy, "uid " + std::to_string(peer.uid) + " sent more than " +
                                         std::to_string(m_report_limiter.per_minute()) +
                                         " failure reports in a minute (reports_per_minute); this one was ignored");
  }
  const proto::Digest256 key_id = proto::key_id(request->key);
  store::FailureReport report;
  report.cu_result = request->cu_result;
  report.stage = request->stage;
  report.detail = std::move(request->detail);
  report.reporter_uid = static_cast<std::uint32_t>(peer.uid);
  auto outcome = m_stores.tenancy.report_failure(key_id, who, report);
  if (!outcome) return failure(outcome.error(), "REPORT_FAILURE");

  Counters::add(m_counters.failure_reports);
  m_counters.load_failures.count(request->cu_result);
  // The detail is not logged: it is the client's free text and stays in the store.
  std::string verdict = "no such entry";
  proto::ReportFailureReply reply;
  if (outcome->has_value()) {
    const store::ReportOutcome& applied = **outcome;
    reply.namespace_id = applied.namespace_id;
    switch (applied.verdict) {
      case store::ReportVerdict::quarantined:
        Counters::add(m_counters.quarantines);
        reply.outcome = proto::ReportFailureOutcome::quarantined;
        verdict = applied.reporters > 0 ? "quarantined: reported by " + std::to_string(applied.reporters) + " uids"
                                        : "quarantined";
        break;
      case store::ReportVerdict::already_quarantined:
        reply.outcome = proto::ReportFailureOutcome::already_quarantined;
        verdict = "already quarantined";
        break;
      case store::ReportVerdict::hidden_from_reporter:
        Counters::add(m_counters.reports_held);
        reply.outcome = proto::ReportFailureOutcome::hidden_from_reporter;
        verdict = "no longer served to this uid; " + std::to_string(applied.reporters) + " of " +
                  "report_quorum uids have reported it";
        break;
    }
    verdict += " (namespace " + std::to_string(applied.namespace_id) + ")";
  }
  spdlog::warn("REPORT_FAILURE key_id={} uid={} pid={} cu_result={} stage={}: {}", proto::to_hex(key_id), peer.uid,
               peer.pid, request->cu_result, proto::failure_stage_name(request->stage), verdict);
  if (!outcome->has_value()) return error_reply(Status::not_found, "no entry for this key");
  return ok_payload(reply);
}

}  // namespace jitcache::daemon::ops
