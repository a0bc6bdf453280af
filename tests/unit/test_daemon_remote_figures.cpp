// A remote's figures: every STATS name is in proto/PROTOCOL.md "STATS names of a remote" and every
// metric family in docs/operations.md "What a fleet's remotes report", and the other way round, so
// the documents stay equal to the one list in daemon/remote/remote_figures.cpp.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <daemon/metrics/exposition.hpp>
#include <daemon/metrics/remote_families.hpp>
#include <daemon/remote/redis/redis_backend.hpp>
#include <daemon/remote/remote_figures.hpp>
#include <tests/support/markdown_tables.hpp>
#include <tests/support/memory_backend.hpp>

namespace {

using namespace jitcache;
namespace remote = jitcache::daemon::remote;

std::string source_file(const std::string& path) {
  std::ifstream in(std::string(JITCACHE_SOURCE_DIR) + "/" + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

remote::RemoteTier one_remote_tier() {
  std::vector<std::unique_ptr<remote::RemoteBackend>> backends;
  backends.push_back(std::make_unique<testing::MemoryBackend>());
  return remote::RemoteTier({}, std::move(backends), remote::TrustedKeys{}, std::nullopt);
}

}  // namespace

TEST_CASE("remote figures: PROTOCOL.md lists every STATS name of a remote, and no other") {
  auto tier = one_remote_tier();
  std::set<std::string> names;
  const std::regex bucket(R"(calls_le_[0-9]+_us)");
  for (const auto& [full_name, value] : remote::remote_stats_values(&tier)) {
    if (!full_name.starts_with("remote0.")) continue;
    const std::string n = full_name.substr(std::string("remote0.").size());
    names.insert(n.starts_with("errors.")      ? "errors.<kind>"
                 : n.starts_with("rejected.")  ? "rejected.<reason>"
                 : std::regex_match(n, bucket) ? "calls_le_<N>_us"
                                               : n);
  }
  // A Redis remote adds its own figures; this tier's remote is in memory, so they come from a Redis
  // backend (one that never connects: making it cannot fail).
  for (const auto& [name, value] : remote::make_redis_backend(remote::RedisSettings{})->own_figures())
    names.insert(name);
  std::set<std::string> documented;
  for (const auto& row : testing::markdown_table_after(source_file("proto/PROTOCOL.md"), "STATS names of a remote")) {
    std::istringstream cell(row.at(0));
    for (std::string name; std::getline(cell, name, ',');) documented.insert(testing::trim_cell(name));
  }
  CHECK(documented == names);
}

TEST_CASE("remote figures: STATS names them remote<i>.<figure> after remotes and remote_uploads_queued") {
  auto tier = one_remote_tier();
  const auto values = remote::remote_stats_values(&tier);
  REQUIRE(values.size() > 2);
  CHECK(values[0] == std::pair<std::string, std::uint64_t>{"remotes", 1});
  CHECK(values[1].first == "remote_uploads_queued");
  CHECK(values[2].first == "remote0.lookups");
  const auto none = remote::remote_stats_values(nullptr);
  REQUIRE(none.size() == 2);
  CHECK(none[0].second == 0);
}

TEST_CASE("remote figures: docs/operations.md lists every metric family of a remote, and no other") {
  auto tier = one_remote_tier();
  daemon::metrics::Exposition out;
  daemon::metrics::append_remote_families(out, &tier);
  std::set<std::string> families;
  const std::regex type_line(R"(# TYPE (jitcache_[a-z_]+) )");
  const std::string text = out.text();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), type_line); it != std::sregex_iterator(); ++it) {
    families.insert((*it)[1].str());
  }
  std::set<std::string> documented;
  const std::regex metric_name(R"(jitcache_[a-z_]+)");
  for (const auto& row :
       testing::markdown_table_after(source_file("docs/operations.md"), "What a fleet's remotes report")) {
    const std::string& cell = row.at(0);
    for (auto it = std::sregex_iterator(cell.begin(), cell.end(), metric_name); it != std::sregex_iterator(); ++it) {
      documented.insert(it->str());
    }
  }
  CHECK(documented == families);
  CHECK_THAT(text, Catch::Contains("remote=\"0\""));
  CHECK_THAT(text, Catch::Contains("url=\"memory://test\""));
}

TEST_CASE("remote figures: STATS carries the latency histogram's buckets, each counted on its own") {
  auto tier = one_remote_tier();
  auto& buckets = tier.remote(0).counters.latency_buckets;
  buckets[0] = 3;                   // at most 100 us
  buckets[3] = 2;                   // over 500 us, at most 1 ms
  buckets[buckets.size() - 1] = 1;  // over 10 s
  std::map<std::string, std::uint64_t> values;
  for (const auto& [name, value] : remote::remote_stats_values(&tier)) values[name] = value;
  CHECK(values.at("remote0.calls_le_100_us") == 3);
  CHECK(values.at("remote0.calls_le_250_us") == 0);
  CHECK(values.at("remote0.calls_le_1000_us") == 2);
  CHECK(values.at("remote0.calls_le_10000000_us") == 0);
  CHECK(values.at("remote0.calls_over_10000000_us") == 1);
  CHECK(values.at("remote0.calls") == 6);
}
