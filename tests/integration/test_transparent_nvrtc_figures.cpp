// The daemon's NVRTC figures (docs/operations.md "Metrics", daemon/stats/nvrtc_figures.hpp): the
// program (g) (tests/programs/nvrtc_compile.c) compiles under libjitcache-preload.so with the
// toolkit's real NVRTC against the real daemon, and STATS, `jitcache stats` and /metrics (on a Unix
// socket) count its hits, misses, PUTs and compile time saved apart from the loads' (they are counted
// there too), and the compiles it could not cache by the reason it sent (NVRTC_NOTE).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/http_get.hpp>
#include <tests/support/nvrtc_program_run.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonOptions;
using jitcache::testing::DaemonProcess;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;
using jitcache::testing::nvrtc::compile_args;
using jitcache::testing::nvrtc::run_program;
using jitcache::testing::nvrtc::Sources;
using jitcache::testing::transparent::run_env;

namespace {

// The value of one sample line of a scrape ("jitcache_nvrtc_lookup_misses_total{reason=\"corrupt\"} 0").
std::string sample(const std::string& scrape, const std::string& name) {
  const std::size_t at = scrape.find("\n" + name + " ");
  if (at == std::string::npos) return "absent";
  const std::size_t start = at + name.size() + 2;
  return scrape.substr(start, scrape.find('\n', start) - start);
}

// The value `jitcache stats` shows for one name (its lines are "name   value").
std::string shown_value(const std::string& output, const std::string& name) {
  const std::size_t at = output.find("\n" + name + " ");
  if (at == std::string::npos) return "absent";
  const std::size_t start = output.find_first_not_of(' ', at + name.size() + 1);
  return output.substr(start, output.find_first_of(" \n", start) - start);
}

}  // namespace

TEST_CASE(
    "nvrtc figures: hits, misses, puts and compile time saved of NVRTC keys, in STATS, jitcache stats and /metrics") {
  TempDir state;
  const std::string metrics = state.file("metrics/metrics.sock");
  DaemonProcess daemon(state, DaemonOptions{{"--metrics-listen", "unix:" + metrics}, {}, "warn"});
  daemon.start();
  auto client = daemon.client();
  Sources sources;
  const auto env = run_env(daemon.socket_path(), true);

  const ChildResult miss = run_program(compile_args(sources), env);
  REQUIRE(miss.status == 0);
  CHECK(stat_value(client, "nvrtc_misses") == 1);
  CHECK(stat_value(client, "nvrtc_puts") == 1);
  CHECK(stat_value(client, "nvrtc_hits") == 0);

  const ChildResult hit = run_program(compile_args(sources), env);
  CHECK(hit.output == miss.output);
  CHECK(stat_value(client, "nvrtc_hits") == 1);
  CHECK(stat_value(client, "nvrtc_misses") == 1);
  CHECK(stat_value(client, "nvrtc_compile_microseconds_saved") > 0);
  // NVRTC's figures are a part of every load's.
  CHECK(stat_value(client, "hits") == 1);
  CHECK(stat_value(client, "puts") == 1);

  // Two compiles the cache cannot key, each for its reason: an option with side effects, and an
  // option the table lacks. Neither sends a LOOKUP; each sends its reason (NVRTC_NOTE).
  const ChildResult timed = run_program(compile_args(sources, {"--time=" + state.file("time.csv")}), env);
  CHECK(timed.status == 0);
  const ChildResult unknown = run_program(compile_args(sources, {"--an-option-nvrtc-lacks"}), env);
  CHECK_THAT(unknown.output, Catch::Contains("compile=5"));  // NVRTC's own answer: NVRTC_ERROR_INVALID_OPTION
  CHECK(stat_value(client, "nvrtc_uncached_side_effect_option") == 1);
  CHECK(stat_value(client, "nvrtc_uncached_unknown_option") == 1);
  CHECK(stat_value(client, "nvrtc_uncached_unnamed_include") == 0);
  CHECK(stat_value(client, "nvrtc_misses") == 1);
  CHECK(stat_value(client, "nvrtc_hits") == 1);
  CHECK(stat_value(client, "entries") == 1);

  const auto scrape = jitcache::testing::http_get_unix(metrics, "/metrics");
  REQUIRE(scrape.has_value());
  INFO(scrape->body);
  CHECK(sample(scrape->body, "jitcache_nvrtc_lookup_hits_total") == "1");
  CHECK(sample(scrape->body, "jitcache_nvrtc_lookup_misses_total{reason=\"not_found\"}") == "1");
  CHECK(sample(scrape->body, "jitcache_nvrtc_puts_total") == "1");
  CHECK(sample(scrape->body, "jitcache_nvrtc_lookup_misses_total{reason=\"corrupt\"}") == "0");
  CHECK(sample(scrape->body, "jitcache_lookup_hits_total") == "1");
  CHECK(sample(scrape->body, "jitcache_nvrtc_uncached_total{reason=\"side_effect_option\"}") == "1");
  CHECK(sample(scrape->body, "jitcache_nvrtc_uncached_total{reason=\"unknown_option\"}") == "1");
  CHECK(sample(scrape->body, "jitcache_nvrtc_uncached_total{reason=\"compiled_before\"}") == "0");

  // `jitcache stats` shows them under their STATS names.
  const ChildResult shown =
      jitcache::testing::run_child_captured({JITCACHE_CLI_PATH, "stats"}, {{"JITCACHE_SOCKET", daemon.socket_path()}},
                                            std::chrono::seconds(30));
  REQUIRE(shown.status == 0);
  CHECK(shown_value(shown.output, "nvrtc_hits") == "1");
  CHECK(shown_value(shown.output, "nvrtc_puts") == "1");
  CHECK(shown_value(shown.output, "nvrtc_uncached_side_effect_option") == "1");
}

TEST_CASE("nvrtc figures: a note with a reason outside the table is bad_request and counts nothing") {
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  for (const std::uint8_t reason : {std::uint8_t{0}, std::uint8_t{8}, std::uint8_t{255}}) {
    auto noted = client.nvrtc_note(static_cast<jitcache::proto::NvrtcUncachedReason>(reason));
    REQUIRE_FALSE(noted);
    CHECK(noted.error().reply_status == static_cast<std::uint16_t>(jitcache::proto::Status::bad_request));
  }
  REQUIRE(client.nvrtc_note(jitcache::proto::NvrtcUncachedReason::compiled_before));
  CHECK(stat_value(client, "nvrtc_uncached_compiled_before") == 1);
  CHECK(stat_value(client, "nvrtc_uncached_internal_error") == 0);
  CHECK(stat_value(client, "nvrtc_misses") == 0);
}
