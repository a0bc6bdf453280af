// The one table of the daemon's figures (daemon/stats/counter_table.hpp), which drives both STATS and
// the metrics endpoint: the table is well formed, every figure appears in both outputs with the same
// value, the names users scrape and script are the ones they were before the table existed, and
// PROTOCOL.md and docs/operations.md list them all.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <proto/messages.hpp>

#include <daemon/metrics/counter_families.hpp>
#include <daemon/metrics/daemon_metrics.hpp>
#include <daemon/ops/request_handler.hpp>
#include <daemon/stats/counter_table.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/markdown_tables.hpp>
#include <tests/support/store_dir.hpp>

namespace {

using namespace jitcache;
using daemon::stats::CounterRow;
using daemon::stats::FigureSources;
using daemon::stats::k_counter_table;
using daemon::stats::PerStatus;

// What STATS reported before the table drove it, in its order (`jitcache stats` on the daemon of
// the commit before). A name is never renamed or dropped; one added is appended here.
const std::vector<std::string> k_stats_names_before{
    "entries",
    "bytes_raw",
    "bytes_stored",
    "entries_quarantined",
    "corrupt_entries",
    "hot_cache_hits",
    "hot_cache_misses",
    "hot_cache_bytes",
    "hot_cache_entries",
    "max_size",
    "evictions",
    "evicted_bytes",
    "quota_evictions",
    "store_resets",
    "store_reopens",
    "usage_pending",
    "usage_dropped",
    // Added with the kept sources (store/sources.hpp).
    "sources",
    "source_bytes",
    "sources_dropped",
    "published_images",
    "published_bytes",
    "publish_failures",
    "requests",
    "hits",
    "misses",
    "misses_quarantined",
    "misses_corrupt",
    "fast_key_lookups",
    "fast_key_hits",
    "images_by_descriptor",
    "images_by_descriptor_failed",
    "published_hits",
    "puts",
    "put_bytes",
    "removes",
    "failure_reports",
    "quarantines",
    "reports_held",
    "reports_rate_limited",
    "bytes_served",
    "connections",
    "connections_total",
    "connections_refused",
    "connections_refused_per_uid",
    "accept_failures",
    "requests_refused_bytes",
    "requests_refused_bytes_per_uid",
    "dropped_idle",
    "dropped_deadline",
    "dropped_protocol",
    "errors.not_found",
    "errors.bad_request",
    "errors.too_large",
    "errors.forbidden",
    "errors.busy",
    "errors.unavailable",
    "errors.internal",
    "errors.compile_error",
    "errors.cannot_compile",
    "errors.worker_failed",
    "errors.no_space",
    "compile_requests",
    "compile_store_hits",
    "compiles",
    "compile_failures",
    "compile_seconds",
    "compile_microseconds",
    "single_flight_joins",
    "compile_refused",
    "compile_busy",
    "compile_busy_per_uid",
    "compile_negative_hits",
    "compile_queue_length",
    "compile_running",
    "compile_stored",
    "compile_seconds_saved",
    "compile_microseconds_saved",
    // Added for `jitcache doctor` (docs/cli.md "doctor"): the set-up.
    "compile_worker_ready",
    "compile_worker_probe_failed",
    "compile_nvjitlink_version",
    // Added with the daemon's own NVRTC (compile_nvrtc_library).
    "compile_nvrtc_version",
    "compile_nvrtc_probe_failed",
    "publishing",
    "store_free_bytes",
    "store_filesystem_bytes",
    // Added with `jitcache explain` (the table's rows come before the fleet tier's figures).
    "explains",
    // Added with NVRTC's figures (daemon/stats/nvrtc_figures.hpp).
    "nvrtc_hits",
    "nvrtc_misses",
    "nvrtc_misses_quarantined",
    "nvrtc_misses_corrupt",
    "nvrtc_puts",
    "nvrtc_compile_seconds_saved",
    "nvrtc_compile_microseconds_saved",
    "nvrtc_uncached_side_effect_option",
    "nvrtc_uncached_unknown_option",
    "nvrtc_uncached_unnamed_include",
    "nvrtc_uncached_unreadable_library",
    "nvrtc_uncached_compiled_before",
    "nvrtc_uncached_not_stored",
    "nvrtc_uncached_internal_error",
    // Added with the re-JIT (daemon/rejit/).
    "rejit_batches",
    "rejit_compiled",
    "rejit_failed",
    "rejit_over_budget",
    "rejit_compile_seconds",
    "rejit_compile_microseconds",
    // Added with bundles (docs/bundle-format.md).
    "bundles_imported",
    "bundle_entries_imported",
    "bundle_entries_skipped",
    "bundle_entries_removed",  // added when operators' removals began to stick (docs/security.md "Bundles")
    "bundles_refused",
    "bundles_exported",
    "bundle_entries_exported",
    // Added with the fleet tier (its per-remote figures follow when remotes are configured:
    // test_daemon_remote_figures.cpp).
    "remotes",
    "remote_uploads_queued",
};

// The metric families (and their types) /metrics had before the table drove it.
const std::vector<std::pair<std::string, std::string>> k_metric_families_before{
    {"jitcache_build_info", "gauge"},
    {"jitcache_requests_total", "counter"},
    {"jitcache_lookup_hits_total", "counter"},
    {"jitcache_lookup_misses_total", "counter"},
    {"jitcache_published_hits_total", "counter"},
    {"jitcache_served_bytes_total", "counter"},
    {"jitcache_puts_total", "counter"},
    {"jitcache_put_bytes_total", "counter"},
    {"jitcache_request_errors_total", "counter"},
    {"jitcache_compile_requests_total", "counter"},
    {"jitcache_compiles_total", "counter"},
    {"jitcache_compile_failures_total", "counter"},
    {"jitcache_compile_seconds_total", "counter"},
    {"jitcache_compile_seconds_saved_total", "counter"},
    {"jitcache_compile_single_flight_joins_total", "counter"},
    {"jitcache_compile_busy_total", "counter"},
    {"jitcache_compile_busy_per_uid_total", "counter"},
    {"jitcache_compile_queue_length", "gauge"},
    {"jitcache_compile_running", "gauge"},
    {"jitcache_load_failures_total", "counter"},
    {"jitcache_quarantines_total", "counter"},
    {"jitcache_failure_reports_held_total", "counter"},
    {"jitcache_failure_reports_rate_limited_total", "counter"},
    {"jitcache_entries", "gauge"},
    {"jitcache_entries_quarantined", "gauge"},
    {"jitcache_stored_bytes", "gauge"},
    {"jitcache_raw_bytes", "gauge"},
    {"jitcache_max_size_bytes", "gauge"},
    {"jitcache_evictions_total", "counter"},
    {"jitcache_evicted_bytes_total", "counter"},
    {"jitcache_quota_evictions_total", "counter"},
    {"jitcache_corrupt_entries_total", "counter"},
    {"jitcache_store_resets_total", "counter"},
    {"jitcache_store_reopens_total", "counter"},
    {"jitcache_usage_pending", "gauge"},
    {"jitcache_usage_dropped_total", "counter"},
    {"jitcache_hot_cache_hits_total", "counter"},
    {"jitcache_hot_cache_misses_total", "counter"},
    {"jitcache_hot_cache_bytes", "gauge"},
    {"jitcache_namespace_stored_bytes", "gauge"},
    {"jitcache_namespace_entries", "gauge"},
    {"jitcache_published_images", "gauge"},
    {"jitcache_published_bytes", "gauge"},
    {"jitcache_publish_failures_total", "counter"},
    {"jitcache_connections", "gauge"},
    {"jitcache_connections_total", "counter"},
    {"jitcache_connections_refused_total", "counter"},
    {"jitcache_connections_refused_per_uid_total", "counter"},
    {"jitcache_accept_failures_total", "counter"},
    {"jitcache_requests_refused_bytes_total", "counter"},
    {"jitcache_requests_refused_bytes_per_uid_total", "counter"},
    {"jitcache_images_by_descriptor_failed_total", "counter"},
    {"jitcache_connections_dropped_total", "counter"},
    {"jitcache_request_duration_seconds", "histogram"},
};

// The labelled samples of those families (load failures, latency and build info aside: their
// labels come from the CUresult and op tables, tested with those).
const std::vector<std::string> k_labelled_samples_before{
    "jitcache_lookup_misses_total{reason=\"not_found\"}",
    "jitcache_lookup_misses_total{reason=\"quarantined\"}",
    "jitcache_lookup_misses_total{reason=\"corrupt\"}",
    "jitcache_request_errors_total{status=\"not_found\"}",
    "jitcache_request_errors_total{status=\"bad_request\"}",
    "jitcache_request_errors_total{status=\"too_large\"}",
    "jitcache_request_errors_total{status=\"forbidden\"}",
    "jitcache_request_errors_total{status=\"busy\"}",
    "jitcache_request_errors_total{status=\"unavailable\"}",
    "jitcache_request_errors_total{status=\"internal\"}",
    "jitcache_request_errors_total{status=\"compile_error\"}",
    "jitcache_request_errors_total{status=\"cannot_compile\"}",
    "jitcache_request_errors_total{status=\"worker_failed\"}",
    "jitcache_request_errors_total{status=\"no_space\"}",
    "jitcache_namespace_stored_bytes{namespace=\"shared\"}",
    "jitcache_namespace_stored_bytes{namespace=\"users\"}",
    "jitcache_namespace_entries{namespace=\"shared\"}",
    "jitcache_namespace_entries{namespace=\"users\"}",
    "jitcache_connections_dropped_total{reason=\"idle\"}",
    "jitcache_connections_dropped_total{reason=\"deadline\"}",
    "jitcache_connections_dropped_total{reason=\"protocol\"}",
};

// Families the table added: the STATS figures /metrics did not show before.
const std::vector<std::pair<std::string, std::string>> k_metric_families_added{
    {"jitcache_hot_cache_entries", "gauge"},
    {"jitcache_fast_key_lookups_total", "counter"},
    {"jitcache_fast_key_hits_total", "counter"},
    {"jitcache_images_by_descriptor_total", "counter"},
    {"jitcache_removes_total", "counter"},
    {"jitcache_failure_reports_total", "counter"},
    {"jitcache_compile_store_hits_total", "counter"},
    {"jitcache_compile_refused_total", "counter"},
    {"jitcache_compile_negative_hits_total", "counter"},
    {"jitcache_compile_stored_total", "counter"},
    // Added for `jitcache doctor`.
    {"jitcache_compile_worker_ready", "gauge"},
    {"jitcache_compile_worker_probe_failed", "gauge"},
    {"jitcache_compile_nvjitlink_version", "gauge"},
    {"jitcache_publishing", "gauge"},
    {"jitcache_store_free_bytes", "gauge"},
    {"jitcache_store_filesystem_bytes", "gauge"},
    {"jitcache_explains_total", "counter"},
    // The kept sources and the re-JIT.
    {"jitcache_sources", "gauge"},
    {"jitcache_source_bytes", "gauge"},
    {"jitcache_sources_dropped_total", "counter"},
    {"jitcache_rejit_batches_total", "counter"},
    {"jitcache_rejit_compiled_total", "counter"},
    {"jitcache_rejit_failed_total", "counter"},
    {"jitcache_rejit_over_budget_total", "counter"},
    {"jitcache_rejit_compile_seconds_total", "counter"},
    {"jitcache_bundles_imported_total", "counter"},
    {"jitcache_bundle_entries_imported_total", "counter"},
    {"jitcache_bundle_entries_skipped_total", "counter"},
    {"jitcache_bundle_entries_removed_total", "counter"},
    {"jitcache_bundles_refused_total", "counter"},
    {"jitcache_bundles_exported_total", "counter"},
    {"jitcache_bundle_entries_exported_total", "counter"},
    {"jitcache_nvrtc_lookup_hits_total", "counter"},
    {"jitcache_nvrtc_lookup_misses_total", "counter"},
    {"jitcache_nvrtc_puts_total", "counter"},
    {"jitcache_nvrtc_compile_seconds_saved_total", "counter"},
    {"jitcache_nvrtc_uncached_total", "counter"},
    {"jitcache_compile_nvrtc_version", "gauge"},
    {"jitcache_compile_nvrtc_probe_failed", "gauge"},
};

// Every source a row can read, owned, so a test can give each field a value of its own.
struct Figures {
  daemon::stats::Counters counters;
  daemon::store::Totals totals;
  daemon::publish::PublisherStats published;
  daemon::compile::CompileCounters engine;
  daemon::stats::StoreSpace space;

  FigureSources sources(bool with_totals = true) const {
    return FigureSources{counters, with_totals ? &totals : nullptr, published, &engine, space};
  }

  void set(const daemon::stats::Field& field, std::uint64_t value) {
    struct Setter {
      Figures& f;
      std::uint64_t v;
      void operator()(daemon::stats::Counters::Counter daemon::stats::Counters::*m) const { (f.counters.*m).store(v); }
      void operator()(std::uint64_t daemon::store::Totals::*m) const { f.totals.*m = v; }
      void operator()(std::uint64_t daemon::publish::PublisherStats::*m) const { f.published.*m = v; }
      void operator()(daemon::compile::CompileCounters::Counter daemon::compile::CompileCounters::*m) const {
        (f.engine.*m).store(v);
      }
      void operator()(std::uint64_t daemon::stats::StoreSpace::*m) const { f.space.*m = v; }
      void operator()(PerStatus) const {
        for (const auto& status : proto::k_statuses) {
          for (std::uint64_t i = 0;
               status.value != proto::Status::ok && i < v + static_cast<std::uint64_t>(status.value); ++i) {
            f.counters.count_error(status.value);
          }
        }
      }
    };
    std::visit(Setter{*this, value}, field);
  }

  // A value of its own for every row's field; a family's total above the sum of its parts.
  void give_every_field_its_own_value() {
    for (std::size_t i = 0; i < k_counter_table.size(); ++i) {
      const CounterRow& row = k_counter_table[i];
      set(row.field, std::holds_alternative<PerStatus>(row.field) ? 3 : (i + 1) * 1'000'003);
    }
    for (std::size_t i = 0; i < k_counter_table.size(); ++i) {
      const CounterRow& row = k_counter_table[i];
      if (!row.family_total) continue;
      std::uint64_t parts = 0;
      for (std::size_t j = i + 1; j < k_counter_table.size() && k_counter_table[j].metric == row.metric; ++j) {
        parts += daemon::stats::read_field(k_counter_table[j].field, sources());
      }
      set(row.field, daemon::stats::read_field(row.field, sources()) + parts);
    }
  }
};

std::map<std::string, std::uint64_t> as_map(const std::vector<std::pair<std::string, std::uint64_t>>& values) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [name, value] : values) REQUIRE(out.emplace(name, value).second);
  return out;
}

// "name{labels}" -> value text, and "name" -> type, from an exposition.
struct Scrape {
  std::map<std::string, std::string> samples;
  std::vector<std::pair<std::string, std::string>> families;
};

Scrape parse(const std::string& text) {
  Scrape scrape;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("# TYPE ")) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      scrape.families.emplace_back(name, type);
    } else if (!line.empty() && line[0] != '#') {
      const auto space = line.rfind(' ');
      REQUIRE(scrape.samples.emplace(line.substr(0, space), line.substr(space + 1)).second);
    }
  }
  return scrape;
}

std::string sample_key(const CounterRow& row, std::string_view label_value) {
  std::string key(row.metric);
  if (!row.label_name.empty()) key += "{" + std::string(row.label_name) + "=\"" + std::string(label_value) + "\"}";
  return key;
}

std::string render(const FigureSources& sources) {
  daemon::metrics::Exposition out;
  daemon::metrics::append_counter_families(out, sources);
  return out.take();
}

// Every figure of the table: its STATS value equals its sample on /metrics (in seconds for a
// microseconds figure; the family's sum for a family's total).
void check_same_figures(const std::map<std::string, std::uint64_t>& stats, const Scrape& scrape) {
  for (std::size_t i = 0; i < k_counter_table.size(); ++i) {
    const CounterRow& row = k_counter_table[i];
    INFO("STATS " << row.stats_name << ", metric " << row.metric);
    if (std::holds_alternative<PerStatus>(row.field)) {
      for (const auto& status : proto::k_statuses) {
        if (status.value == proto::Status::ok) continue;
        const std::string key = sample_key(row, status.name);
        REQUIRE(scrape.samples.count(key) == 1);
        CHECK(std::stoull(scrape.samples.at(key)) == stats.at(std::string(row.stats_name) + std::string(status.name)));
      }
      continue;
    }
    REQUIRE(stats.count(std::string(row.stats_name)) == 1);
    const std::uint64_t value = stats.at(std::string(row.stats_name));
    const std::string key = sample_key(row, row.label_value);
    REQUIRE(scrape.samples.count(key) == 1);
    if (!row.stats_seconds_name.empty()) {
      CHECK(std::stod(scrape.samples.at(key)) == static_cast<double>(value) / 1e6);
      CHECK(stats.at(std::string(row.stats_seconds_name)) == value / 1'000'000);
    } else if (row.family_total) {
      std::uint64_t family = 0;
      for (std::size_t j = i; j < k_counter_table.size() && k_counter_table[j].metric == row.metric; ++j) {
        family += std::stoull(scrape.samples.at(sample_key(k_counter_table[j], k_counter_table[j].label_value)));
      }
      CHECK(family == value);
    } else {
      CHECK(std::stoull(scrape.samples.at(key)) == value);
    }
  }
}

std::string source_file(const std::string& relative) {
  std::ifstream in(std::string(JITCACHE_SOURCE_DIR) + "/" + relative);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("counter table: names are unique, a family's rows are together, and only its first row has help or a total") {
  std::set<std::string_view> families;
  std::string_view previous;
  for (std::size_t i = 0; i < k_counter_table.size(); ++i) {
    const CounterRow& row = k_counter_table[i];
    INFO(row.stats_name << " / " << row.metric);
    CHECK(row.metric.starts_with("jitcache_"));
    const bool first_of_family = row.metric != previous;
    if (first_of_family) {
      CHECK(families.insert(row.metric).second);  // a family's rows are consecutive
      CHECK_FALSE(row.help.empty());
      CHECK(row.metric.ends_with("_total") == (row.type == daemon::stats::FigureType::counter));
    } else {
      CHECK(row.help.empty());
      CHECK_FALSE(row.family_total);
      CHECK(row.type == k_counter_table[i - 1].type);
      CHECK_FALSE(row.label_name.empty());
      CHECK(row.label_name == k_counter_table[i - 1].label_name);
    }
    if (!row.label_name.empty() && !std::holds_alternative<PerStatus>(row.field)) CHECK_FALSE(row.label_value.empty());
    previous = row.metric;
  }
  // STATS names, the whole-seconds ones and errors.<status> included, are unique too.
  Figures figures;
  CHECK_NOTHROW(as_map(daemon::stats::stats_values(figures.sources())));
}

TEST_CASE("counter table: no two rows read the same field") {
  for (std::size_t i = 0; i < k_counter_table.size(); ++i) {
    for (std::size_t j = i + 1; j < k_counter_table.size(); ++j) {
      INFO(k_counter_table[i].stats_name << " and " << k_counter_table[j].stats_name);
      CHECK_FALSE(k_counter_table[i].field == k_counter_table[j].field);
    }
  }
}

TEST_CASE("counter table: every figure appears in STATS and in /metrics with the same value") {
  Figures figures;
  figures.give_every_field_its_own_value();
  const auto stats = as_map(daemon::stats::stats_values(figures.sources()));
  const Scrape scrape = parse(render(figures.sources()));
  check_same_figures(stats, scrape);
  // And the misses by reason are the parts: not_found is what quarantined and corrupt leave.
  CHECK(std::stoull(scrape.samples.at("jitcache_lookup_misses_total{reason=\"not_found\"}")) ==
        stats.at("misses") - stats.at("misses_quarantined") - stats.at("misses_corrupt"));
}

TEST_CASE("counter table: a scrape without the store's totals leaves out the store's figures and shows the rest") {
  Figures figures;
  figures.give_every_field_its_own_value();
  const Scrape scrape = parse(render(figures.sources(false)));
  for (const CounterRow& row : k_counter_table) {
    INFO(row.metric);
    bool present = false;
    for (const auto& [name, type] : scrape.families) present |= name == row.metric;
    CHECK(present == !daemon::stats::reads_totals(row));
  }
}

TEST_CASE("counter table: a daemon that cannot compile reports every compile figure as 0 in both outputs") {
  Figures figures;
  figures.give_every_field_its_own_value();
  FigureSources sources = figures.sources();
  sources.engine = nullptr;
  const auto stats = as_map(daemon::stats::stats_values(sources));
  CHECK(stats.at("compiles") == 0);
  CHECK(stats.at("compile_seconds") == 0);
  CHECK(stats.at("compile_queue_length") == 0);
  CHECK(stats.at("compile_requests") != 0);  // the daemon's own count of COMPILE requests stays
  check_same_figures(stats, parse(render(sources)));
}

namespace {

std::unique_ptr<daemon::store::SqliteStore> open_store_in(const testing::StoreDir& dir) {
  daemon::store::SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 1;
  auto opened = daemon::store::SqliteStore::open(options);
  REQUIRE(opened.ok());
  return std::move(*opened);
}

// A store, the daemon's counters, and the two outputs over them as the daemon makes them.
struct DaemonParts {
  testing::StoreDir dir{"jitcache-counter-table-test"};
  std::unique_ptr<daemon::store::SqliteStore> store = open_store_in(dir);
  daemon::stats::Counters counters;

  std::map<std::string, std::uint64_t> stats_reply() {
    daemon::ops::RequestHandler handler{*store, counters, proto::k_default_max_frame_bytes};
    const daemon::ops::Reply reply =
        handler.handle(proto::Op::stats, {}, daemon::policy::PeerCredentials{::geteuid(), ::getegid(), 100, {}});
    REQUIRE(reply.status == proto::Status::ok);
    auto decoded = proto::decode_stats_reply(proto::Bytes(reply.payload));
    REQUIRE(decoded.ok());
    return as_map(decoded->values);
  }
  std::vector<std::string> stats_names() {
    daemon::ops::RequestHandler handler{*store, counters, proto::k_default_max_frame_bytes};
    const daemon::ops::Reply reply =
        handler.handle(proto::Op::stats, {}, daemon::policy::PeerCredentials{::geteuid(), ::getegid(), 100, {}});
    auto decoded = proto::decode_stats_reply(proto::Bytes(reply.payload));
    REQUIRE(decoded.ok());
    std::vector<std::string> names;
    for (const auto& [name, value] : decoded->values) names.push_back(name);
    return names;
  }
  std::string scrape() {
    daemon::metrics::DaemonMetrics metrics{counters, *store, *store, nullptr, nullptr, false};
    return metrics.render();
  }
};

}  // namespace

TEST_CASE("counter table: the request handler's STATS and a scrape of the same daemon agree on every figure") {
  DaemonParts parts;
  for (std::size_t i = 0; i < k_counter_table.size(); ++i) {
    const auto* member =
        std::get_if<daemon::stats::Counters::Counter daemon::stats::Counters::*>(&k_counter_table[i].field);
    if (member != nullptr) (parts.counters.*(*member)).store(1000 * (i + 1));
  }
  daemon::stats::Counters::add(parts.counters.misses, 1'000'000);  // above its parts
  daemon::stats::Counters::add(parts.counters.nvrtc_misses, 1'000'000);
  parts.counters.count_error(proto::Status::forbidden);
  const auto stats = parts.stats_reply();  // counts itself in requests, before it reads them
  check_same_figures(stats, parse(parts.scrape()));
  CHECK(stats.at("errors.forbidden") == 1);
}

TEST_CASE("counter table: STATS names and metric families are the ones users scripted before, plus the ones added") {
  DaemonParts parts;
  CHECK(parts.stats_names() == k_stats_names_before);

  const Scrape scrape = parse(parts.scrape());
  std::vector<std::pair<std::string, std::string>> expected = k_metric_families_before;
  expected.insert(expected.end(), k_metric_families_added.begin(), k_metric_families_added.end());
  std::sort(expected.begin(), expected.end());
  std::vector<std::pair<std::string, std::string>> families = scrape.families;
  std::sort(families.begin(), families.end());
  CHECK(families == expected);
  for (const std::string& sample : k_labelled_samples_before) {
    INFO(sample);
    CHECK(scrape.samples.count(sample) == 1);
  }
}

TEST_CASE("counter table: PROTOCOL.md lists every STATS name and docs/operations.md every metric family") {
  Figures figures;
  std::set<std::string> stats_names;
  for (const auto& [name, value] : daemon::stats::stats_values(figures.sources())) {
    stats_names.insert(name.starts_with("errors.") ? "errors.<status>" : name);
  }
  std::set<std::string> documented_stats;
  for (const auto& row : testing::markdown_table_after(source_file("proto/PROTOCOL.md"), "STATS names")) {
    // A row may name two figures: "`compile_seconds`, `compile_microseconds`".
    std::istringstream names(row.at(0));
    for (std::string name; std::getline(names, name, ',');) documented_stats.insert(testing::trim_cell(name));
  }
  // A remote's own figures have their table (test_daemon_remote_figures.cpp checks it); this daemon has none.
  documented_stats.erase("remote<i>.<figure>");
  CHECK(documented_stats == stats_names);

  DaemonParts parts;
  std::set<std::string> families;
  for (const auto& [name, type] : parse(parts.scrape()).families) families.insert(name);
  std::set<std::string> documented_metrics;
  const std::regex metric_name(R"(jitcache_[a-z_]+)");
  for (const auto& row : testing::markdown_table_after(source_file("docs/operations.md"), "Metrics")) {
    const std::string& cell = row.at(0);
    for (auto it = std::sregex_iterator(cell.begin(), cell.end(), metric_name); it != std::sregex_iterator(); ++it) {
      documented_metrics.insert(it->str());
    }
  }
  CHECK(documented_metrics == families);
}
