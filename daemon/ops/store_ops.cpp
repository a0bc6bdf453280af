// STATS, LIST, REMOVE, GC and VERIFY (PROTOCOL.md §5): the store's figures, its entries, and the
// operator's levers (GC and VERIFY are for trusted callers: their op table rows say so).
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

Reply RequestHandler::stats(OpCall& call) {
  const proto::Bytes payload = call.payload;
  if (auto empty = proto::decode_empty(payload, "STATS"); !empty) return failure(empty.error(), "STATS");
  auto totals = m_stores.serving.totals();
  if (!totals) return failure(totals.error(), "STATS");
  const stats::FigureSources sources{m_counters, &*totals,
                                     m_publisher != nullptr ? m_publisher->stats() : publish::PublisherStats{},
                                     m_compile != nullptr ? &m_compile->service().counters() : nullptr,
                                     stats::store_space(m_counters.store_directory)};
  proto::StatsReply reply;
  reply.values = stats::stats_values(sources);
  return ok_payload(reply);
}

Reply RequestHandler::list(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  auto request = proto::decode_list_request(payload);
  if (!request) return failure(request.error(), "LIST");
  store::ListQuery query;
  query.arch = std::move(request->arch);
  query.driver_api = request->driver_api;
  query.driver_build = std::move(request->driver_build);
  if (request->namespace_filter) query.namespace_id = request->namespace_id;
  query.key_id_prefix = std::move(request->key_id_prefix);
  query.limit = request->limit;
  query.cursor = std::move(request->cursor);
  query.stale_only = request->stale_only;
  auto page = m_stores.serving.list(query, visibility_for(peer));
  if (!page) return failure(page.error(), "LIST");
  proto::ListReply reply;
  reply.entries = std::move(page->entries);
  reply.next_cursor = std::move(page->next_cursor);
  return ok_payload(reply);
}

Reply RequestHandler::remove(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  auto request = proto::decode_remove_request(payload);
  if (!request) return failure(request.error(), "REMOVE");
  auto removed = m_stores.serving.remove(request->key_id_prefix, visibility_for(peer));
  if (!removed) return failure(removed.error(), "REMOVE");
  if (*removed == 0) return error_reply(Status::not_found, "no entry of yours matches " + request->key_id_prefix);
  Counters::add(m_counters.removes, *removed);
  spdlog::info("REMOVE prefix={} removed={} peer {}", request->key_id_prefix, *removed, peer.describe());
  proto::RemoveReply reply;
  reply.removed = *removed;
  return ok_payload(reply);
}

Reply RequestHandler::gc(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  if (auto empty = proto::decode_empty(payload, "GC"); !empty) return failure(empty.error(), "GC");
  auto outcome = m_stores.maintenance.collect_garbage();
  if (!outcome) return failure(outcome.error(), "GC");
  spdlog::info("GC evicted={} bytes={} stale={} left={} entries, {} bytes peer {}", outcome->evicted_entries,
               outcome->evicted_bytes, outcome->stale_entries, outcome->entries, outcome->bytes_stored,
               peer.describe());
  proto::GcReply reply;
  reply.evicted_entries = outcome->evicted_entries;
  reply.evicted_bytes = outcome->evicted_bytes;
  reply.stale_entries = outcome->stale_entries;
  reply.entries = outcome->entries;
  reply.bytes_stored = outcome->bytes_stored;
  return ok_payload(reply);
}

Reply RequestHandler::verify(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  if (auto empty = proto::decode_empty(payload, "VERIFY"); !empty) return failure(empty.error(), "VERIFY");
  spdlog::info("VERIFY started by peer {}", peer.describe());
  auto report = store::run_verify(m_stores.maintenance, proto::k_max_verify_listed);
  if (!report) return failure(report.error(), "VERIFY");
  const auto log =
      report->integrity == "ok" && report->entries_removed == 0 ? spdlog::level::info : spdlog::level::warn;
  spdlog::log(log, "VERIFY integrity_check={} checked={} removed={} in {} ms peer {}",
              report->integrity == "ok" ? "ok" : "FAILED: " + report->integrity, report->entries_checked,
              report->entries_removed, report->duration.count(), peer.describe());
  proto::VerifyReply reply;
  reply.integrity = std::move(report->integrity);
  reply.entries_checked = report->entries_checked;
  reply.entries_removed = report->entries_removed;
  for (const auto& removed : report->removed) reply.removed.push_back({removed.key_id, removed.namespace_id});
  reply.duration_ms = static_cast<std::uint64_t>(report->duration.count());
  return ok_payload(reply);
}

}  // namespace jitcache::daemon::ops
