#include <client/cli/explain_output.hpp>

#include <proto/cu_result_names.hpp>

#include <client/cli/format.hpp>
#include <client/cli/terminal_text.hpp>
#include <client/cli/text_table.hpp>

namespace jitcache::client::cli {

namespace {

using proto::ExplainReason;

constexpr std::size_t k_short_key_id_length = 16;

std::string short_id(const proto::Digest256& id) { return proto::to_hex(id).substr(0, k_short_key_id_length); }

std::string entry_name(const proto::ExplainFinding& f) {
  return "entry " + short_id(f.key_id) + " (" + namespace_name(f.namespace_id) + ")";
}

std::string cu_result_text(std::uint32_t code) {
  const proto::CuResultName* row = proto::find_cu_result(code);
  return std::to_string(code) + (row != nullptr ? " " + std::string(row->name) : std::string());
}

std::string stage_text(std::uint8_t stage) {
  return std::string(proto::failure_stage_name(static_cast<proto::FailureStage>(stage)));
}

std::string driver_of(const proto::KeyFields& key) { return std::to_string(key.driver_api) + "/" + key.driver_build; }

// One sentence: what the finding says, in words.
std::string sentence(const proto::ExplainFinding& f) {
  const std::string detail = f.detail.empty() ? "" : ": " + f.detail;
  switch (f.reason) {
    case ExplainReason::hit:
      return "served by " + entry_name(f) + ", stored " + iso8601_utc(f.at_ms) + " (" + f.detail + ")";
    case ExplainReason::other_driver: return entry_name(f) + " has this content for another driver";
    case ExplainReason::other_options: return entry_name(f) + " has this content with other options";
    case ExplainReason::other_arch: return entry_name(f) + " has this content for another arch";
    case ExplainReason::other_key_schema: return entry_name(f) + " has this content under another key schema";
    case ExplainReason::other_fields: return entry_name(f) + " has this content with other key fields";
    case ExplainReason::quarantined:
      return entry_name(f) + " is quarantined since " + iso8601_utc(f.at_ms) + ": CUresult " +
             cu_result_text(f.cu_result) + " at stage " + stage_text(f.stage) +
             (f.uid != k_uid_not_shown ? ", reported by uid " + std::to_string(f.uid) : std::string()) + detail;
    case ExplainReason::reported_by_caller:
      return entry_name(f) + " is not served to you: you reported it failing at " + iso8601_utc(f.at_ms) +
             " (CUresult " + cu_result_text(f.cu_result) + " at stage " + stage_text(f.stage) + ")";
    case ExplainReason::hidden:
      if (f.key_id == proto::Digest256{}) return f.detail.empty() ? "exists in another namespace" : f.detail;
      return entry_name(f) + " exists in a namespace this caller's lookups do not see";
    case ExplainReason::compile_error: return "the daemon remembers that compiling this key failed" + detail;
    case ExplainReason::evicted:
      return entry_name(f) + " was evicted " + iso8601_utc(f.at_ms) + " (" +
             std::string(proto::eviction_cause_name(f.eviction)) + ")" + detail;
    case ExplainReason::no_content: return "no entry with this content at all: nothing stored was built from this PTX";
    case ExplainReason::recent_miss:
      return "uid " + std::to_string(f.uid) + " missed it " + iso8601_utc(f.at_ms) + " (" + f.detail + ")";
    case ExplainReason::unknown_key: return "the daemon knows no entry, recent miss or eviction of this key id";
  }
  return "?";
}

Json key_to_json(const proto::KeyFields& key) {
  Json json;
  json["content_digest"] = proto::to_hex(key.content);
  json["key_schema"] = key.key_schema;
  json["arch"] = key.arch;
  json["driver_api"] = key.driver_api;
  json["driver_build"] = key.driver_build;
  json["options"] = key.options;
  return json;
}

Json finding_to_json(const proto::ExplainFinding& f) {
  Json json;
  json["reason"] = proto::explain_reason_name(f.reason);
  json["key_id"] = f.key_id == proto::Digest256{} ? "" : proto::to_hex(f.key_id);
  json["namespace"] = f.namespace_id;
  json["at"] = f.at_ms != 0 ? iso8601_utc(f.at_ms) : "";
  json["at_ms"] = f.at_ms;
  if (f.reason == ExplainReason::quarantined || f.reason == ExplainReason::reported_by_caller) {
    json["cu_result"] = f.cu_result;
    const proto::CuResultName* row = proto::find_cu_result(f.cu_result);
    json["cu_result_name"] = row != nullptr ? std::string(row->name) : "";
    json["stage"] = stage_text(f.stage);
  }
  if (f.reason == ExplainReason::quarantined || f.reason == ExplainReason::recent_miss) {
    if (f.uid != k_uid_not_shown) json["uid"] = f.uid;
    else json["uid"] = nullptr;
  }
  if (f.reason == ExplainReason::evicted) json["eviction"] = proto::eviction_cause_name(f.eviction);
  json["detail"] = f.detail;
  Json differences = Json::array();
  for (const auto& d : f.differences) {
    differences.push_back(Json{{"field", d.field}, {"asked", d.asked}, {"found", d.found}});
  }
  json["differences"] = std::move(differences);
  json["text"] = sentence(f);
  return json;
}

}  // namespace

void print_explanation(std::ostream& out, const std::string& title, const proto::ExplainReply& reply) {
  out << terminal_text(title) << ": " << proto::explain_verdict_name(reply.verdict) << " (key id "
      << proto::to_hex(reply.key_id) << ")\n";
  if (reply.key_known) {
    out << "  key: " << terminal_text(reply.key.arch) << ", driver " << terminal_text(driver_of(reply.key))
        << ", options " << terminal_text(reply.key.options) << "\n";
  }
  for (const proto::ExplainFinding& f : reply.findings) {
    out << "  " << proto::explain_reason_name(f.reason) << ": " << terminal_text(sentence(f)) << "\n";
    for (const auto& d : f.differences) {
      out << "      " << terminal_text(d.field) << ": asked " << terminal_text(d.asked.empty() ? "(none)" : d.asked)
          << ", stored " << terminal_text(d.found.empty() ? "(none)" : d.found) << "\n";
    }
  }
}

Json explanation_to_json(const proto::ExplainReply& reply) {
  Json json;
  json["verdict"] = proto::explain_verdict_name(reply.verdict);
  json["key_id"] = proto::to_hex(reply.key_id);
  json["key"] = reply.key_known ? key_to_json(reply.key) : Json(nullptr);
  Json findings = Json::array();
  for (const auto& f : reply.findings) findings.push_back(finding_to_json(f));
  json["findings"] = std::move(findings);
  return json;
}

void print_misses(std::ostream& out, const proto::MissesReply& reply) {
  const std::int64_t now = now_unix_ms();
  out << "recent misses (" << reply.misses.size() << "):\n";
  if (!reply.misses.empty()) {
    TextTable table({{"WHEN", Align::left},
                     {"UID", Align::right},
                     {"OP", Align::left},
                     {"MISS", Align::left},
                     {"KEY ID", Align::left},
                     {"ARCH", Align::left},
                     {"DRIVER", Align::left},
                     {"OPTIONS", Align::left}});
    for (const auto& m : reply.misses) {
      table.add_row({human_age(m.at_ms, now), std::to_string(m.uid), std::string(proto::op_name(m.op)),
                     std::string(proto::miss_kind_name(m.kind)),
                     m.key_id == proto::Digest256{} ? "(fast key)" : short_id(m.key_id), m.key.arch, driver_of(m.key),
                     m.key.options});
    }
    table.print(out);
  }
  out << "recent evictions (" << reply.evictions.size() << "):\n";
  if (!reply.evictions.empty()) {
    TextTable table({{"WHEN", Align::left},
                     {"WHY", Align::left},
                     {"KEY ID", Align::left},
                     {"NAMESPACE", Align::left},
                     {"ARCH", Align::left},
                     {"DRIVER", Align::left},
                     {"SIZE", Align::right},
                     {"HITS", Align::right},
                     {"COMPILE", Align::right}});
    for (const auto& e : reply.evictions) {
      table.add_row({human_age(e.evicted_at_ms, now), std::string(proto::eviction_cause_name(e.cause)),
                     short_id(e.key_id), namespace_name(e.namespace_id), e.key.arch, driver_of(e.key),
                     human_bytes(e.stored_bytes), std::to_string(e.hits), human_duration_us(e.compile_time_us)});
    }
    table.print(out);
  }
}

Json misses_to_json(const proto::MissesReply& reply) {
  Json json;
  Json misses = Json::array();
  for (const auto& m : reply.misses) {
    Json miss;
    miss["at"] = iso8601_utc(m.at_ms);
    miss["at_ms"] = m.at_ms;
    miss["uid"] = m.uid;
    miss["op"] = proto::op_name(m.op);
    miss["miss"] = proto::miss_kind_name(m.kind);
    miss["key_id"] = m.key_id == proto::Digest256{} ? "" : proto::to_hex(m.key_id);
    miss["key"] = key_to_json(m.key);
    miss["content_fast"] = m.content_fast == proto::Checksum128{} ? "" : proto::to_hex(m.content_fast);
    misses.push_back(std::move(miss));
  }
  json["misses"] = std::move(misses);
  Json evictions = Json::array();
  for (const auto& e : reply.evictions) {
    Json eviction;
    eviction["at"] = iso8601_utc(e.evicted_at_ms);
    eviction["at_ms"] = e.evicted_at_ms;
    eviction["reason"] = proto::eviction_cause_name(e.cause);
    eviction["key_id"] = proto::to_hex(e.key_id);
    eviction["namespace"] = e.namespace_id;
    eviction["key"] = key_to_json(e.key);
    eviction["stored_size"] = e.stored_bytes;
    eviction["hits"] = e.hits;
    eviction["compile_time_us"] = e.compile_time_us;
    evictions.push_back(std::move(eviction));
  }
  json["evictions"] = std::move(evictions);
  return json;
}

}  // namespace jitcache::client::cli
