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

namespace {

Reply failure(const common::Error& error, std::string_view context) {
  const Status status = status_for(error);
  if (status == Status::internal) spdlog::error("{}: {}", context, error.message);
  if (status == Status::no_space) spdlog::warn("{}: the disk is full: {}", context, error.message);
  return error_reply(status, error.message);
}

template <class T>
Reply ok_payload(const T& message) {
  return Reply{Status::ok, proto::encode(message), nullptr, false};
}

// A LOOKUP hit, encoded only for the way the image travels: as bytes after the head, or, when the
// request asked for a descriptor (k_flag_image_fd) and the image is worth one, with the head that
// names its size (the connection sends the memfd, or falls back to image_as_bytes).
Reply hit_reply(store::Hit& hit, std::uint16_t flags) {
  const auto image_size = static_cast<std::uint32_t>(hit.image->size());
  if ((flags & proto::k_flag_image_fd) != 0 && hit.image->size() >= k_min_image_by_descriptor) {
    return Reply{Status::ok, proto::encode(proto::LookupReplyByDescriptor{hit.info, image_size}), std::move(hit.image),
                 true};
  }
  return Reply{Status::ok, proto::encode_lookup_reply_head(hit.info, image_size), std::move(hit.image), false};
}

}  // namespace

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

Reply RequestHandler::lookup(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  auto request = proto::decode_lookup_request(payload);
  if (!request) return failure(request.error(), "LOOKUP");
  const bool by_fast_key = request->selector == proto::LookupSelector::fast_key;
  std::optional<store::Selector> selector;
  if (request->selector == proto::LookupSelector::key) {
    if (auto valid = proto::validate_key(request->key); !valid) return failure(valid.error(), "LOOKUP");
    if (m_compile != nullptr) {
      m_compile->note_asked(request->key.arch, request->key.driver_api, request->key.driver_build,
                            visibility_for(peer));
    }
    selector = store::Selector::key(request->key);
  } else if (by_fast_key) {
    if (auto valid = proto::validate_fast_key(request->fast_key); !valid) return failure(valid.error(), "LOOKUP");
    Counters::add(m_counters.fast_key_lookups);
    if (m_compile != nullptr) {
      m_compile->note_asked(request->fast_key.arch, request->fast_key.driver_api, request->fast_key.driver_build,
                            visibility_for(peer));
    }
    selector = store::Selector::fast_key(request->fast_key);
  } else {
    selector = store::Selector::key_id_prefix(request->key_id_prefix);
  }
  auto found = m_stores.serving.lookup(*selector, visibility_for(peer));
  // Not this LOOKUP's answer: the connection asks again on the remote lane (defer_remote.hpp).
  if (remote::DeferRemote::deferred_here()) return error_reply(Status::not_found, "asked of the remotes");
  if (!found) return failure(found.error(), "LOOKUP");
  // The search ends here, whichever the selector: every entry has a fast key, so a fast-key miss is
  // final (PROTOCOL.md §5 LOOKUP), and each LOOKUP counts one hit or one miss.
  if (const auto* miss = std::get_if<store::Miss>(&*found)) {
    Counters::add(m_counters.misses);
    if (miss->reason == store::MissReason::quarantined) Counters::add(m_counters.misses_quarantined);
    if (miss->reason == store::MissReason::corrupt) Counters::add(m_counters.misses_corrupt);
    const auto uid = static_cast<std::uint32_t>(peer.uid);
    if (request->selector == proto::LookupSelector::key) {
      m_counters.recent_misses.record(miss_of_key(Op::lookup, miss->reason, uid, request->key));
    } else if (by_fast_key) {
      m_counters.recent_misses.record(miss_of_fast_key(miss->reason, uid, request->fast_key));
    }
    return error_reply(Status::not_found, "no entry for this key");
  }
  store::Hit& hit = std::get<store::Hit>(*found);
  Counters::add(m_counters.hits);
  if (by_fast_key) Counters::add(m_counters.fast_key_hits);
  Counters::add(m_counters.compile_microseconds_saved, hit.info.compile_time_us);
  Counters::add(m_counters.bytes_served, hit.image->size());
  // Only a hit by fast key names the file; clients look up by fast key, so that is every entry
  // they use. The publisher's thread writes the file: the reply does not wait for it.
  if (by_fast_key && m_publisher != nullptr) m_publisher->served(hit, request->fast_key, selector->id());
  return hit_reply(hit, call.flags);
}

Reply RequestHandler::put(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  auto request = proto::decode_put_request(payload);
  if (!request) return failure(request.error(), "PUT");
  if (auto valid = proto::validate_key(request->key); !valid) return failure(valid.error(), "PUT");
  if (request->image.empty()) return error_reply(Status::bad_request, "PUT carries an empty image");
  if (auto valid = check_entry_image(request->image, request->key); !valid) return failure(valid.error(), "PUT");
  // Every entry has a fast key (schema 7), so that a LOOKUP by fast key that finds nothing is final.
  if (!request->content_fast) {
    return error_reply(Status::bad_request,
                       "PUT without content_fast: every entry needs its fast key (the XXH3-128 "
                       "of its source, PROTOCOL.md §5 PUT)");
  }
  if (auto valid = proto::validate_fast_key(proto::fast_key_of(request->key, *request->content_fast)); !valid) {
    return failure(valid.error(), "PUT");
  }

  const store::Visibility who = visibility_for(peer);
  store::PutInput input;
  input.key = std::move(request->key);
  input.namespace_id = who.own_namespace;
  input.producer = std::move(request->producer);
  input.compile_time_us = request->compile_time_us;
  input.image = request->image;
  input.content_fast = *request->content_fast;
  auto outcome = m_stores.serving.put(input);
  if (!outcome) return failure(outcome.error(), "PUT");

  Counters::add(m_counters.puts);
  Counters::add(m_counters.put_bytes, input.image.size());
  if (m_publisher != nullptr) {
    m_publisher->stored(outcome->row_id, input.namespace_id, proto::fast_key_of(input.key, input.content_fast),
                        input.image);
  }
  spdlog::info("PUT key_id={} namespace={} arch={} driver={}/{} bytes={} replaced={} peer {}",
               proto::to_hex(outcome->key_id), input.namespace_id, input.key.arch, input.key.driver_api,
               input.key.driver_build, input.image.size(), outcome->replaced, peer.describe());
  proto::PutReply reply;
  reply.key_id = outcome->key_id;
  reply.namespace_id = input.namespace_id;
  reply.replaced = outcome->replaced;
  return ok_payload(reply);
}

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

Reply RequestHandler::hit_note(OpCall& call) {
  const proto::Bytes payload = call.payload;
  auto request = proto::decode_hit_note_request(payload);
  if (!request) return failure(request.error(), "HIT_NOTE");
  if (auto valid = proto::validate_fast_key(request->fast_key); !valid) return failure(valid.error(), "HIT_NOTE");
  // Counted as the LOOKUP it replaced would have been: the driver is in use, the entry was hit
  // (hits, last use for eviction, compile time saved). The client does not wait for this reply.
  m_stores.maintenance.note_driver_asked(
      store::AskedDriver{request->fast_key.driver_api, request->fast_key.driver_build});
  const proto::Digest256 fast_key_id = proto::fast_key_id(request->fast_key);
  auto found = m_stores.publish_source.note_published_hit(fast_key_id);
  if (!found) return failure(found.error(), "HIT_NOTE");
  // An entry gone since the client read its file is not an error: the client's load is done.
  if (found->has_value()) {
    if (m_publisher != nullptr) m_publisher->note_used(fast_key_id);
    Counters::add(m_counters.hits);
    Counters::add(m_counters.published_hits);
    Counters::add(m_counters.compile_microseconds_saved, (*found)->compile_time_us);
  }
  return Reply{};
}

}  // namespace jitcache::daemon::ops
