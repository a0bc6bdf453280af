// `jitcache explain` and `jitcache misses` (EXPLAIN and MISSES, PROTOCOL.md §5) against the real
// jitcached: one stored entry of the corpus PTX, and a key that differs from it in exactly one
// field, for each reason a load can miss; a hit; a key id and a process report as inputs; --json;
// and the recent misses and evictions. Each case starts its own daemon (a fraction of a second).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <proto/content_digest.hpp>
#include <proto/explain_messages.hpp>
#include <proto/jit_options.hpp>
#include <proto/key.hpp>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using namespace std::chrono_literals;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::TempDir;
using Json = nlohmann::json;

namespace {

const std::string k_corpus_ptx = JITCACHE_TEST_DATA_DIR "/small_kernel.ptx";
const std::string k_driver = "13000/580.159.04";

// The key the CLI builds for the corpus PTX with --arch sm_90 --driver k_driver and `options`.
proto::KeyFields corpus_key(const std::string& options = "", const std::string& arch = "sm_90",
                            const std::string& build = "580.159.04") {
  proto::KeyFields key;
  key.content = proto::content_digest(proto::as_bytes(testing::read_file(k_corpus_ptx)));
  key.arch = arch;
  key.driver_api = 13000;
  key.driver_build = build;
  auto canonical = proto::canonicalize_option_text(options);
  REQUIRE(canonical);
  key.options = *canonical;
  return key;
}

proto::PutRequest put_of(const proto::KeyFields& key, const std::vector<std::uint8_t>& image) {
  proto::PutRequest request;
  request.key = key;
  request.producer = "test";
  request.compile_time_us = 250'000;
  request.image = proto::Bytes(image);
  request.content_fast = proto::xxh3_128(proto::as_bytes(proto::to_hex(proto::key_id(key))));
  return request;
}

struct ExplainDaemon {
  explicit ExplainDaemon(DaemonOptions options = {}) : daemon(dir, std::move(options)) { daemon.start(); }

  // The corpus key stored in the shared namespace (the test runs as root: a trusted caller).
  void store_corpus_entry() {
    auto client = daemon.client();
    auto put = client.put(put_of(corpus_key(), image));
    INFO((put ? std::string() : put.error().message));
    REQUIRE(put);
  }

  testing::ChildResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), testing::cli_executable());
    return testing::run_child_captured(args, {{"JITCACHE_SOCKET", daemon.socket_path()}}, 30s);
  }

  // `jitcache --json explain ARGS...`, parsed; `status` is the exit status it must have.
  Json explain_json(std::vector<std::string> args, int status) {
    args.insert(args.begin(), {"--json", "explain"});
    auto run = cli(args);
    INFO("stdout: " << run.output << "\nstderr: " << run.errors);
    CHECK(run.status == status);
    Json json;
    REQUIRE_NOTHROW(json = Json::parse(run.output));
    return json;
  }

  TempDir dir{"jitcache-explain"};
  DaemonProcess daemon;
  std::vector<std::uint8_t> image = testing::sample_image(7, 4096);
};

std::vector<std::string> corpus_args(const std::string& arch = "sm_90", const std::string& driver = k_driver) {
  return {"--source", k_corpus_ptx, "--arch", arch, "--driver", driver};
}

// The one finding of `reason` in an explain document.
Json finding(const Json& explained, const std::string& reason) {
  INFO(explained.dump(2));
  Json found;
  for (const auto& f : explained.at("findings")) {
    if (f.at("reason") == reason) {
      REQUIRE(found.is_null());
      found = f;
    }
  }
  REQUIRE_FALSE(found.is_null());
  return found;
}

}  // namespace

TEST_CASE("explain: a stored key is a hit, in text and in --json, exit 0") {
  ExplainDaemon d;
  d.store_corpus_entry();
  auto run = d.cli({"explain", "--source", k_corpus_ptx, "--arch", "sm_90", "--driver", k_driver});
  INFO(run.output << run.errors);
  CHECK(run.status == 0);
  CHECK_THAT(run.output, Catch::Contains(": hit (key id " + proto::to_hex(proto::key_id(corpus_key())) + ")"));
  CHECK_THAT(run.output, Catch::Contains("  hit: served by entry " +
                                         proto::to_hex(proto::key_id(corpus_key())).substr(0, 16) + " (shared)"));
  const Json json = d.explain_json(corpus_args(), 0);
  CHECK(json.at("verdict") == "hit");
  CHECK(json.at("key").at("arch") == "sm_90");
  CHECK(finding(json, "hit").at("detail") == "test");
}

TEST_CASE("explain: the same content under another driver build is named, with both builds") {
  ExplainDaemon d;
  d.store_corpus_entry();
  const Json json = d.explain_json(corpus_args("sm_90", "13000/580.65.06"), 1);
  CHECK(json.at("verdict") == "miss");
  const Json f = finding(json, "other_driver");
  CHECK(f.at("key_id") == proto::to_hex(proto::key_id(corpus_key())));
  REQUIRE(f.at("differences").size() == 1);
  CHECK(f.at("differences")[0].at("field") == "driver");
  CHECK(f.at("differences")[0].at("asked") == "13000/580.65.06");
  CHECK(f.at("differences")[0].at("found") == k_driver);
}

TEST_CASE("explain: other options are named option by option") {
  ExplainDaemon d;
  d.store_corpus_entry();
  auto args = corpus_args();
  args.insert(args.end(), {"--options", "maxrreg=64"});
  const Json json = d.explain_json(args, 1);
  const Json f = finding(json, "other_options");
  REQUIRE(f.at("differences").size() == 1);
  CHECK(f.at("differences")[0].at("field") == "option maxrreg");
  CHECK(f.at("differences")[0].at("asked") == "64");
  CHECK(f.at("differences")[0].at("found") == "0");
  auto text =
      d.cli({"explain", "--source", k_corpus_ptx, "--arch", "sm_90", "--driver", k_driver, "--options", "maxrreg=64"});
  CHECK(text.status == 1);
  CHECK_THAT(text.output, Catch::Contains("option maxrreg: asked 64, stored 0"));
}

TEST_CASE("explain: another arch is named") {
  ExplainDaemon d;
  d.store_corpus_entry();
  const Json json = d.explain_json(corpus_args("sm_80"), 1);
  const Json f = finding(json, "other_arch");
  REQUIRE(f.at("differences").size() == 1);
  CHECK(f.at("differences")[0].at("field") == "arch");
  CHECK(f.at("differences")[0].at("asked") == "sm_80");
  CHECK(f.at("differences")[0].at("found") == "sm_90");
}

TEST_CASE("explain: a quarantined entry says when, which CUresult, at which stage, by whom and why") {
  ExplainDaemon d;
  d.store_corpus_entry();
  auto client = d.daemon.client();
  proto::ReportFailureRequest report;
  report.key = corpus_key();
  report.cu_result = 200;
  report.stage = proto::FailureStage::load;
  report.detail = "CUDA_ERROR_INVALID_IMAGE from the test";
  auto reported = client.report_failure(report);
  REQUIRE(reported);
  REQUIRE(reported->has_value());
  const Json json = d.explain_json(corpus_args(), 1);
  const Json f = finding(json, "quarantined");
  CHECK(f.at("cu_result") == 200);
  CHECK(f.at("cu_result_name") == "CUDA_ERROR_INVALID_IMAGE");
  CHECK(f.at("stage") == "load");
  CHECK(f.at("uid") == 0);
  CHECK(f.at("detail") == "CUDA_ERROR_INVALID_IMAGE from the test");
  CHECK(f.at("at_ms").get<std::int64_t>() > 0);
}

TEST_CASE(
    "explain: an untrusted caller is told the same whether or not another uid holds the key, its content or a miss") {
  testing::SystemUsers users;
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  TempDir dir{"jitcache-explain-tenants"};
  ::chmod(dir.path().c_str(), 0755);
  DaemonOptions options;
  options.extra_args = {"--socket-group", users.group_name()};
  DaemonProcess daemon(dir, options);
  daemon.start();
  const auto image = testing::sample_image(7, 4096);
  // Before A stores anything, B is told there is no entry of this content.
  REQUIRE(testing::as_user(users.b(), {users.group()}, [&] {
            auto client = client::transport::DaemonClient::connect(daemon.connect_options());
            if (!client) return 1;
            auto reply = client->explain(proto::ExplainRequest{proto::ExplainSelector::key, corpus_key(), {}});
            if (!reply || reply->verdict != proto::ExplainVerdict::miss || reply->findings.size() != 1) return 2;
            return reply->findings[0].reason == proto::ExplainReason::no_content ? 0 : 3;
          }) == 0);

  REQUIRE(testing::as_user(users.a(), {users.group()}, [&] {
            auto client = client::transport::DaemonClient::connect(daemon.connect_options());
            if (!client || !client->put(put_of(corpus_key(), image))) return 1;
            auto missed = client->lookup(corpus_key("", "sm_80"));  // a miss of A's, for MISSES below
            return missed && !missed->has_value() ? 0 : 2;
          }) == 0);

  // B is told exactly what it was told when nothing was stored: no entry of this content (by key),
  // an unknown key (by the key id of A's entry or of A's miss), nothing of A's misses.
  REQUIRE(
      testing::as_user(users.b(), {users.group()}, [&] {
        auto client = client::transport::DaemonClient::connect(daemon.connect_options());
        if (!client) return 1;
        for (const auto& key : {corpus_key(), corpus_key("", "sm_80"), corpus_key("", "sm_90", "580.65.06")}) {
          auto reply = client->explain(proto::ExplainRequest{proto::ExplainSelector::key, key, {}});
          if (!reply || reply->verdict != proto::ExplainVerdict::miss || reply->findings.size() != 1) return 2;
          if (reply->findings[0].reason != proto::ExplainReason::no_content) return 3;
        }
        for (const auto& key : {corpus_key(), corpus_key("", "sm_80")}) {
          auto reply = client->explain(proto::ExplainRequest{proto::ExplainSelector::key_id, {}, proto::key_id(key)});
          if (!reply || reply->key_known || reply->findings.size() != 1) return 4;
          if (reply->findings[0].reason != proto::ExplainReason::unknown_key) return 5;
          if (reply->key.arch != proto::KeyFields{}.arch || !reply->key.options.empty()) return 6;
        }
        auto misses = client->misses(256);
        return misses && misses->misses.empty() ? 0 : 7;
      }) == 0);

  // A trusted caller (root) sees whose namespace it is in.
  auto root = daemon.client();
  auto reply = root.explain(proto::ExplainRequest{proto::ExplainSelector::key, corpus_key(), {}});
  REQUIRE(reply);
  REQUIRE_FALSE(reply->findings.empty());
  CHECK(reply->findings[0].reason == proto::ExplainReason::hidden);
  CHECK(reply->findings[0].namespace_id == users.a().uid);
  CHECK(reply->findings[0].key_id == proto::key_id(corpus_key()));
  auto misses = root.misses(256);
  REQUIRE(misses);
  REQUIRE(misses->misses.size() == 1);
  CHECK(misses->misses[0].uid == users.a().uid);
}

TEST_CASE("explain: a compile error the daemon remembers is named with the compiler's message") {
  ExplainDaemon d(DaemonOptions{{"--compile-failure-ttl", "1m"}, {}, "warn"});
  const std::string garbage = ".version 9.0\n.target sm_90\n.address_size 64\nthis is not ptx;\n";
  const std::string path = d.dir.file("garbage.ptx");
  testing::write_file(path, garbage);
  auto client = d.daemon.client();
  auto options = proto::canonicalize_option_text("");
  REQUIRE(options);
  proto::CompileRequest request;
  request.arch = "sm_90";
  request.driver_api = 13000;
  request.driver_build = "580.159.04";
  request.options = *options;
  request.ptx = proto::as_bytes(garbage);
  auto answer = client.compile(request, 60s);
  REQUIRE(answer);
  REQUIRE(answer->kind == client::transport::CompileAnswer::Kind::compile_error);

  const Json json = d.explain_json({"--source", path, "--arch", "sm_90", "--driver", k_driver}, 1);
  const Json f = finding(json, "compile_error");
  CHECK_THAT(f.at("detail").get<std::string>(), Catch::StartsWith("compile_error: "));
  CHECK(finding(json, "recent_miss").at("detail") == "COMPILE not_found");
  finding(json, "no_content");
}

TEST_CASE("explain: an entry evicted for size says when and why, and misses lists the eviction") {
  // LRU, so the corpus entry, stored first, is the one that goes (gdsf would weigh compile times).
  ExplainDaemon d(DaemonOptions{{"--max-size", "1MiB", "--eviction-policy", "lru"}, {}, "warn"});
  d.image = testing::sample_image(7, 400 << 10);
  d.store_corpus_entry();
  auto client = d.daemon.client();
  for (std::uint64_t seed : {1, 2}) {
    auto put = client.put(testing::sample_put(seed, testing::sample_image(seed, 400 << 10)));
    REQUIRE(put);
  }
  const Json json = d.explain_json(corpus_args(), 1);
  const Json f = finding(json, "evicted");
  CHECK(f.at("eviction") == "size");
  CHECK(f.at("key_id") == proto::to_hex(proto::key_id(corpus_key())));
  CHECK(f.at("at_ms").get<std::int64_t>() > 0);

  auto run = d.cli({"--json", "misses"});
  INFO(run.output << run.errors);
  REQUIRE(run.status == 0);
  const Json misses = Json::parse(run.output);
  REQUIRE_FALSE(misses.at("evictions").empty());
  const Json& eviction = misses.at("evictions").back();  // newest first: the corpus entry went first
  CHECK(eviction.at("key_id") == proto::to_hex(proto::key_id(corpus_key())));
  CHECK(eviction.at("reason") == "size");
  CHECK(eviction.at("hits") == 0);
}

TEST_CASE("explain: content the store has never held is no entry with this content at all") {
  ExplainDaemon d;
  d.store_corpus_entry();
  const std::string path = d.dir.file("other.ptx");
  testing::write_file(path, testing::read_file(k_corpus_ptx) + "\n// another source\n");
  const Json json = d.explain_json({"--source", path, "--arch", "sm_90", "--driver", k_driver}, 1);
  CHECK(json.at("findings").size() == 1);
  finding(json, "no_content");
}

TEST_CASE("explain: by key id, a recent miss gives the key's fields and its nearest entries") {
  ExplainDaemon d;
  d.store_corpus_entry();
  auto client = d.daemon.client();
  const proto::KeyFields missed = corpus_key("", "sm_90", "580.65.06");
  auto lookup = client.lookup(missed);
  REQUIRE(lookup);
  REQUIRE_FALSE(lookup->has_value());

  const Json json = d.explain_json({proto::to_hex(proto::key_id(missed))}, 1);
  CHECK(json.at("key").at("driver_build") == "580.65.06");
  finding(json, "other_driver");
  CHECK(finding(json, "recent_miss").at("detail") == "LOOKUP not_found");
  const Json hit = d.explain_json({proto::to_hex(proto::key_id(corpus_key()))}, 0);
  CHECK(hit.at("verdict") == "hit");
  const Json unknown = d.explain_json({std::string(64, 'a')}, 1);
  CHECK(unknown.at("key").is_null());
  finding(unknown, "unknown_key");
  auto short_id = d.cli({"explain", "abcdef12"});
  CHECK(short_id.status == 2);
}

TEST_CASE("explain: --report explains each load of a process report that was not a hit") {
  ExplainDaemon d;
  d.store_corpus_entry();
  const proto::KeyFields missed = corpus_key("opt=3");
  const std::string report_path = d.dir.file("report.json");
  Json report;
  report["format"] = "jitcache-process-report";
  report["version"] = 1;
  report["loads"] =
      Json::array({Json{{"entry_point", "cuModuleLoadData"},
                        {"outcome", "hit"},
                        {"key_id", proto::to_hex(proto::key_id(corpus_key()))},
                        {"arch", "sm_90"}},
                   Json{{"entry_point", "cuModuleLoadData"}, {"outcome", "pass_through"}, {"key_id", ""}, {"arch", ""}},
                   Json{{"entry_point", "cuModuleLoadDataEx"},
                        {"outcome", "compiled_locally"},
                        {"key_id", proto::to_hex(proto::key_id(missed))},
                        {"arch", "sm_90"}}});
  testing::write_file(report_path, report.dump());
  // The daemon knows the load's key from its miss.
  auto client = d.daemon.client();
  REQUIRE(client.lookup(missed));

  auto run = d.cli({"explain", "--report", report_path});
  INFO(run.output << run.errors);
  CHECK(run.status == 1);
  CHECK_THAT(run.output, Catch::Contains("load 3 (cuModuleLoadDataEx, compiled_locally, sm_90): miss"));
  CHECK_THAT(run.output, Catch::Contains("option opt: asked 3, stored 4"));
  CHECK_THAT(run.output, !Catch::Contains("load 1"));
  const Json json = d.explain_json({"--report", report_path}, 1);
  REQUIRE(json.size() == 1);
  CHECK(json[0].at("explained") == "load 3 (cuModuleLoadDataEx, compiled_locally, sm_90)");
  finding(json[0], "other_options");

  testing::write_file(report_path, "{\"format\": \"something else\"}");
  CHECK(d.cli({"explain", "--report", report_path}).status == 2);
}

TEST_CASE("misses: recent LOOKUP misses by key and by fast key are listed newest first, within --limit") {
  ExplainDaemon d;
  auto client = d.daemon.client();
  REQUIRE(client.lookup(corpus_key("", "sm_80")));
  REQUIRE(client.lookup_fast(testing::sample_fast_key(3)));

  auto run = d.cli({"--json", "misses"});
  INFO(run.output << run.errors);
  REQUIRE(run.status == 0);
  const Json json = Json::parse(run.output);
  REQUIRE(json.at("misses").size() == 2);
  const Json& fast = json.at("misses")[0];
  CHECK(fast.at("op") == "LOOKUP");
  CHECK(fast.at("key_id") == "");
  CHECK(fast.at("content_fast") == proto::to_hex(testing::sample_content_fast(3)));
  const Json& by_key = json.at("misses")[1];
  CHECK(by_key.at("key_id") == proto::to_hex(proto::key_id(corpus_key("", "sm_80"))));
  CHECK(by_key.at("key").at("arch") == "sm_80");
  CHECK(by_key.at("uid") == 0);
  CHECK(by_key.at("miss") == "not_found");

  auto limited = d.cli({"--json", "misses", "--limit", "1"});
  REQUIRE(limited.status == 0);
  CHECK(Json::parse(limited.output).at("misses").size() == 1);
  auto text = d.cli({"misses"});
  REQUIRE(text.status == 0);
  CHECK_THAT(text.output, Catch::Contains("recent misses (2):"));
  CHECK_THAT(text.output, Catch::Contains("(fast key)"));
  CHECK_THAT(text.output, Catch::Contains("recent evictions (0):"));
  CHECK(d.cli({"misses", "--limit", "0"}).status == 2);
}

TEST_CASE("explain: a fat binary is keyed as a load on the device keys its PTX entry: a miss, then a hit once warmed") {
  ExplainDaemon d;
  const std::string fatbin = JITCACHE_TEST_DATA_DIR "/fatbin_kernel_compute90_options.fatbin";
  const std::vector<std::string> args{"--source", fatbin, "--arch", "sm_90", "--driver", k_driver};
  const Json missed = d.explain_json(args, 1);
  CHECK(missed.at("verdict") == "miss");
  CHECK_THAT(missed.at("explained").get<std::string>(), Catch::Contains("compute_90"));
  finding(missed, "no_content");

  // `jitcache warm` walks it the same way, so what it compiles is the key explain names.
  auto warmed = d.cli({"warm", fatbin, "--arch", "sm_90", "--driver", k_driver});
  INFO(warmed.output << warmed.errors);
  REQUIRE(warmed.status == 0);
  const Json hit = d.explain_json(args, 0);
  CHECK(hit.at("verdict") == "hit");
  CHECK(hit.at("key_id") == missed.at("key_id"));

  // A fat binary holding a cubin the device runs has nothing to explain: nothing is JIT-compiled.
  auto cubin = d.cli({"explain", "--source", JITCACHE_TEST_DATA_DIR "/fatbin_kernel_sm90_compute90.fatbin", "--arch",
                      "sm_90", "--driver", k_driver});
  INFO(cubin.output << cubin.errors);
  CHECK(cubin.status == 2);
  CHECK_THAT(cubin.errors, Catch::Contains("no PTX a load on sm_90 would JIT-compile"));
}
