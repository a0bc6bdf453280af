#include <client/src/loader/report_json.hpp>

#include <cstring>

#include <client/src/driver/cu_result_text.hpp>
#include <client/src/loader/json_text.hpp>
#include <client/src/loader/load_names.hpp>

namespace jitcache::client::loader {

namespace {

constexpr CounterField k_counter_fields[] = {
    {"loads", &jitcache_counters::loads},
    {"pass_through", &jitcache_counters::pass_through},
    {"hits", &jitcache_counters::hits},
    {"compiled_by_daemon", &jitcache_counters::compiled_by_daemon},
    {"compiled_locally", &jitcache_counters::compiled_locally},
    {"rebuilt_after_failed_load", &jitcache_counters::rebuilt_after_failed_load},
    {"uncached_fallbacks", &jitcache_counters::uncached_fallbacks},
    {"daemon_unavailable", &jitcache_counters::daemon_unavailable},
    {"failure_reports", &jitcache_counters::failure_reports},
    {"puts", &jitcache_counters::puts},
    {"put_failures", &jitcache_counters::put_failures},
    {"corrupt_replies", &jitcache_counters::corrupt_replies},
    {"fast_key_mismatches", &jitcache_counters::fast_key_mismatches},
    {"published_hits", &jitcache_counters::published_hits},
    {"published_rejects", &jitcache_counters::published_rejects},
    {"lookups", &jitcache_counters::lookups},
};
// A field added to jitcache_counters must be named above, or the report leaves it out.
static_assert(sizeof(jitcache_counters) == sizeof(std::size_t) + std::size(k_counter_fields) * sizeof(std::uint64_t));

// A fixed-size text field of the record, up to its NUL (or its end, should it have none).
template <std::size_t N>
std::string_view field_text(const char (&field)[N]) {
  return std::string_view(field, strnlen(field, N));
}

void member(std::string& out, std::string_view key, std::string_view text, bool& first) {
  out += first ? "" : ", ";
  first = false;
  append_json_key(out, key);
  append_json_string(out, text);
}

void member(std::string& out, std::string_view key, std::uint64_t value, bool& first) {
  out += first ? "" : ", ";
  first = false;
  append_json_key(out, key);
  append_json_number(out, value);
}

void render_load(std::string& out, const ReportedLoad& load) {
  const jitcache_load_info& info = load.info;
  bool first = true;
  out += "    {";
  member(out, "entry_point", field_text(load.entry_point), first);
  member(out, "outcome", outcome_name(info.outcome), first);
  member(out, "result", driver::static_result_name(info.result), first);
  member(out, "result_code", static_cast<std::uint64_t>(info.result), first);
  member(out, "stage", stage_key(info.stage), first);
  member(out, "stage_result", field_text(info.result_name), first);
  member(out, "stage_result_code", static_cast<std::uint64_t>(info.stage_result), first);
  member(out, "key_id", field_text(info.key_id), first);
  member(out, "arch", field_text(info.arch), first);
  member(out, "ns_total", info.ns_total, first);
  member(out, "ns_setup", info.ns_setup, first);
  member(out, "ns_classify", info.ns_classify, first);
  member(out, "ns_key", info.ns_key, first);
  member(out, "ns_lookup", info.ns_lookup, first);
  member(out, "ns_compile", info.ns_compile, first);
  member(out, "ns_load", info.ns_load, first);
  member(out, "ns_report", info.ns_report, first);
  member(out, "ns_put", info.ns_put, first);
  member(out, "reason", field_text(info.reason), first);
  out += "}";
}

}  // namespace

std::span<const CounterField> counter_fields() { return k_counter_fields; }

std::string render_report(const ReportSnapshot& snapshot) {
  // One top-level member per line and one load per line: a report reads well as it is and greps
  // well, one load at a time.
  std::string out = "{";
  bool first = true;
  const auto line = [&](std::string_view key) {
    out += first ? "\n  " : ",\n  ";
    first = false;
    append_json_key(out, key);
  };
  line("format");
  append_json_string(out, "jitcache-process-report");
  line("version");
  append_json_number(out, static_cast<std::uint64_t>(k_report_format_version));
  line("program");
  append_json_string(out, snapshot.program);
  line("comm");
  append_json_string(out, snapshot.comm);
  line("exe");
  append_json_string(out, snapshot.exe);
  line("pid");
  append_json_number(out, static_cast<std::uint64_t>(snapshot.pid));
  if (snapshot.forked_from) {
    line("forked_from");
    append_json_number(out, static_cast<std::uint64_t>(*snapshot.forked_from));
  }

  line("counters");
  out += "{";
  bool first_member = true;
  for (const CounterField& counter : k_counter_fields) {
    member(out, counter.name, snapshot.counters.*counter.field, first_member);
  }
  out += "}";

  line("outcomes");
  out += "{";
  first_member = true;
  for (const jitcache_load_outcome outcome : k_load_outcomes) {
    member(out, outcome_name(outcome), snapshot.outcomes[outcome], first_member);
  }
  out += "}";

  line("loads_kept");
  append_json_number(out, static_cast<std::uint64_t>(snapshot.loads.size()));
  line("loads_dropped");
  append_json_number(out, snapshot.dropped);
  line("loads_limit");
  append_json_number(out, snapshot.limit);
  line("loads");
  out += "[";
  for (std::size_t i = 0; i < snapshot.loads.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    render_load(out, *snapshot.loads[i]);
  }
  out += snapshot.loads.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace jitcache::client::loader
