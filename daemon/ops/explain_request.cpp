#include <daemon/ops/explain_request.hpp>

#include <optional>
#include <string>
#include <vector>

#include <proto/option_differences.hpp>

namespace jitcache::daemon::ops {

namespace {

using proto::ExplainFinding;
using proto::ExplainReason;

bool sees_namespace(const store::Visibility& who, std::uint32_t namespace_id) {
  return namespace_id == store::k_shared_namespace || namespace_id == who.own_namespace;
}

// What a LOOKUP by `who` would do with this row of the key: serve it, or pass over it.
bool serves(const store::NearEntry& row, const store::Visibility& who) {
  if (!sees_namespace(who, row.info.namespace_id) || row.info.quarantined_at_ms != 0) return false;
  return !(row.info.namespace_id == store::k_shared_namespace && row.reported_by_caller);
}

std::string driver_text(std::uint32_t api, const std::string& build) { return std::to_string(api) + "/" + build; }

// The fields in which `found` differs from `asked`, and the reason that sums them up.
ExplainReason compare_keys(const proto::KeyFields& asked, const proto::KeyFields& found,
                           std::vector<proto::ExplainDifference>& differences) {
  int kinds = 0;
  ExplainReason reason = ExplainReason::other_fields;
  if (asked.key_schema != found.key_schema) {
    differences.push_back({"key_schema", std::to_string(asked.key_schema), std::to_string(found.key_schema)});
    ++kinds;
    reason = ExplainReason::other_key_schema;
  }
  if (asked.arch != found.arch) {
    differences.push_back({"arch", asked.arch, found.arch});
    ++kinds;
    reason = ExplainReason::other_arch;
  }
  if (asked.driver_api != found.driver_api || asked.driver_build != found.driver_build) {
    differences.push_back({"driver", driver_text(asked.driver_api, asked.driver_build),
                           driver_text(found.driver_api, found.driver_build)});
    ++kinds;
    reason = ExplainReason::other_driver;
  }
  if (asked.options != found.options) {
    for (auto& option : proto::option_differences(asked.options, found.options)) {
      differences.push_back({"option " + option.option, std::move(option.asked), std::move(option.found)});
    }
    ++kinds;
    reason = ExplainReason::other_options;
  }
  return kinds == 1 ? reason : ExplainReason::other_fields;
}

ExplainFinding about(ExplainReason reason, const proto::EntryInfo& info) {
  ExplainFinding finding;
  finding.reason = reason;
  finding.key_id = info.key_id;
  finding.namespace_id = info.namespace_id;
  finding.at_ms = info.created_at_ms;
  return finding;
}

void explain_exact_rows(const std::vector<store::NearEntry>& rows, const proto::Digest256& key_id,
                        const store::Visibility& who, std::uint32_t uid, proto::ExplainReply& reply) {
  // A LOOKUP serves the shared namespace's entry first, then the caller's own.
  for (const std::uint32_t ns : {store::k_shared_namespace, who.own_namespace}) {
    for (const store::NearEntry& row : rows) {
      if (row.info.key_id != key_id || row.info.namespace_id != ns || !serves(row, who)) continue;
      ExplainFinding finding = about(ExplainReason::hit, row.info);
      finding.detail = row.info.producer;
      reply.verdict = proto::ExplainVerdict::hit;
      reply.findings.push_back(std::move(finding));
      return;
    }
  }
  for (const store::NearEntry& row : rows) {
    if (row.info.key_id != key_id) continue;
    // Only a trusted caller's rows include other namespaces (Diagnosis::near_entries).
    if (!sees_namespace(who, row.info.namespace_id)) {
      ExplainFinding finding = about(ExplainReason::hidden, row.info);
      finding.detail = "namespace " + std::to_string(row.info.namespace_id);
      reply.findings.push_back(std::move(finding));
      continue;
    }
    if (row.info.quarantined_at_ms != 0) {
      ExplainFinding finding = about(ExplainReason::quarantined, row.info);
      finding.at_ms = row.info.quarantined_at_ms;
      finding.cu_result = row.quarantine_result;
      finding.stage = row.quarantine_stage;
      const bool shown = who.trusted || row.quarantine_reporter_uid == uid;
      finding.uid = shown ? row.quarantine_reporter_uid : k_uid_not_shown;
      if (shown) finding.detail = row.quarantine_detail;
      reply.findings.push_back(std::move(finding));
    } else if (row.reported_by_caller) {
      ExplainFinding finding = about(ExplainReason::reported_by_caller, row.info);
      finding.at_ms = row.reported_at_ms;
      finding.cu_result = row.reported_result;
      finding.stage = row.reported_stage;
      finding.uid = uid;
      reply.findings.push_back(std::move(finding));
    }
  }
}

void explain_neighbours(const std::vector<store::NearEntry>& rows, const proto::ExplainReply& asked,
                        std::vector<ExplainFinding>& out) {
  // Only a trusted caller's rows include other namespaces (Diagnosis::near_entries).
  for (const store::NearEntry& row : rows) {
    if (row.info.key_id == asked.key_id) continue;
    ExplainFinding finding = about(ExplainReason::other_fields, row.info);
    finding.reason = compare_keys(asked.key, row.info.key, finding.differences);
    if (row.info.quarantined_at_ms != 0) finding.detail = "quarantined";
    out.push_back(std::move(finding));
  }
}

std::string eviction_detail(const store::EvictedEntry& entry) {
  return std::to_string(entry.stored_bytes) + " bytes stored, " + std::to_string(entry.hits) + " hits, compiled in " +
         std::to_string(entry.compile_time_us / 1000) + " ms";
}

proto::EvictionCause cause_of(store::EvictionReason reason) {
  switch (reason) {
    case store::EvictionReason::size: return proto::EvictionCause::size;
    case store::EvictionReason::stale_driver: return proto::EvictionCause::stale_driver;
    case store::EvictionReason::quota: return proto::EvictionCause::quota;
  }
  return proto::EvictionCause::size;
}

bool sees_record(const store::Visibility& who, std::uint32_t namespace_id) {
  return who.trusted || sees_namespace(who, namespace_id);
}

// The key fields of a key id, from whatever the daemon knows of it: an entry, a miss, an eviction.
std::optional<proto::KeyFields> key_of_id(const std::vector<store::NearEntry>& rows,
                                          const std::vector<proto::MissRecord>& misses,
                                          const std::vector<store::EvictedEntry>& evictions) {
  if (!rows.empty()) return rows.front().info.key;
  if (!misses.empty()) return misses.front().key;
  if (!evictions.empty()) return evictions.front().key;
  return std::nullopt;
}

}  // namespace

common::Result<proto::ExplainReply> explain(const ExplainSources& sources, const proto::ExplainRequest& request,
                                            const store::Visibility& who, std::uint32_t uid) {
  proto::ExplainReply reply;
  reply.verdict = proto::ExplainVerdict::miss;
  const bool by_key = request.selector == proto::ExplainSelector::key;
  reply.key_id = by_key ? proto::key_id(request.key) : request.key_id;
  // What an untrusted caller is told must not depend on other namespaces (docs/security.md "Who
  // pays for what"): their entries are not read, their misses and evictions are dropped here, before
  // anything (the key fields of a key id included) is taken from them.
  std::vector<proto::MissRecord> misses = sources.misses.of_key(reply.key_id);
  std::erase_if(misses, [&](const proto::MissRecord& miss) { return !who.trusted && miss.uid != uid; });
  std::vector<store::EvictedEntry> evictions = sources.diagnosis.evictions_of(reply.key_id);
  std::erase_if(evictions, [&](const store::EvictedEntry& entry) { return !sees_record(who, entry.namespace_id); });

  std::optional<proto::KeyFields> key;
  if (by_key) {
    key = request.key;
  } else {
    auto own = sources.diagnosis.near_entries(reply.key_id, std::nullopt, who, uid, k_explain_rows);
    JITCACHE_TRY(own);
    key = key_of_id(*own, misses, evictions);
  }
  std::vector<store::NearEntry> rows;
  if (key) {
    reply.key_known = true;
    reply.key = *key;
    auto near = sources.diagnosis.near_entries(reply.key_id, key->content, who, uid, k_explain_rows);
    JITCACHE_TRY(near);
    rows = std::move(*near);
    explain_exact_rows(rows, reply.key_id, who, uid, reply);
  }

  for (const store::EvictedEntry& entry : evictions) {
    ExplainFinding finding;
    finding.reason = ExplainReason::evicted;
    finding.key_id = entry.key_id;
    finding.namespace_id = entry.namespace_id;
    finding.at_ms = entry.evicted_at_ms;
    finding.eviction = cause_of(entry.reason);
    finding.detail = eviction_detail(entry);
    reply.findings.push_back(std::move(finding));
  }
  // A remembered failure is every caller's answer to COMPILE of the key, but its message is of the
  // source: an untrusted caller that named only a key id it cannot see the fields of is not told.
  if (sources.compile != nullptr && (key || who.trusted)) {
    if (auto failure = sources.compile->remembered_failure(reply.key_id)) {
      ExplainFinding finding;
      finding.reason = ExplainReason::compile_error;
      finding.key_id = reply.key_id;
      finding.detail = std::string(compile::outcome_kind_name(failure->kind)) + ": " + failure->message;
      reply.findings.push_back(std::move(finding));
    }
  }
  if (key) explain_neighbours(rows, reply, reply.findings);
  for (const proto::MissRecord& miss : misses) {
    ExplainFinding finding;
    finding.reason = ExplainReason::recent_miss;
    finding.key_id = miss.key_id;
    finding.at_ms = miss.at_ms;
    finding.uid = miss.uid;
    finding.detail = std::string(proto::op_name(miss.op)) + " " + std::string(proto::miss_kind_name(miss.kind));
    reply.findings.push_back(std::move(finding));
    break;  // the newest says when; the ring has the rest (MISSES)
  }
  if (key && rows.empty()) {
    ExplainFinding finding;
    finding.reason = ExplainReason::no_content;
    reply.findings.push_back(std::move(finding));
  }
  if (!key) {
    ExplainFinding finding;
    finding.reason = ExplainReason::unknown_key;
    finding.key_id = reply.key_id;
    reply.findings.push_back(std::move(finding));
  }
  if (reply.findings.size() > proto::k_max_explain_findings) reply.findings.resize(proto::k_max_explain_findings);
  return reply;
}

proto::MissesReply recent_misses(const ExplainSources& sources, std::uint32_t limit, const store::Visibility& who,
                                 std::uint32_t uid) {
  proto::MissesReply reply;
  reply.misses = sources.misses.newest(limit, who.trusted, uid);
  for (const store::EvictedEntry& entry : sources.diagnosis.recent_evictions(limit, who)) {
    proto::EvictionRecord record;
    record.key_id = entry.key_id;
    record.namespace_id = entry.namespace_id;
    record.key = entry.key;
    record.stored_bytes = entry.stored_bytes;
    record.hits = entry.hits;
    record.compile_time_us = entry.compile_time_us;
    record.evicted_at_ms = entry.evicted_at_ms;
    record.cause = cause_of(entry.reason);
    reply.evictions.push_back(std::move(record));
  }
  return reply;
}

}  // namespace jitcache::daemon::ops
