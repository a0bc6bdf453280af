// JITCACHE_REPORT=path (docs/process-report.md) for a real program: a child process that links
// libjitcache, with the fake driver in place of libcuda and the real daemon compiling, writes at its
// exit a JSON report that parses and holds each load with its outcome, the counters and the
// totals; "%p" gives each process (a forked child too) its own file; threads lose no load; a
// program past the limit is summarised; a path that cannot be written costs one warning and
// nothing else.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::TempDir;
using Json = nlohmann::json;

namespace {

namespace fs = std::filesystem;

const std::string k_ptx = JITCACHE_TEST_DATA_DIR "/small_kernel.ptx";

ChildResult run_loader(const std::vector<std::string>& args, const std::string& socket, std::vector<EnvChange> env) {
  std::vector<std::string> argv{JITCACHE_REPORT_LOADER_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  env.push_back({"JITCACHE_SOCKET", socket});
  env.push_back({"JITCACHE_CUDA_DRIVER", JITCACHE_FAKE_CUDA_DRIVER});
  env.push_back({"FAKE_CUDA_CC", "90"});
  ChildResult result = jitcache::testing::run_child_captured(argv, env, std::chrono::seconds(120));
  INFO("stdout: " << result.output << "\nstderr: " << result.errors);
  REQUIRE(result.wait_status != -1);
  return result;
}

Json read_report(const std::string& path) {
  INFO("report " << path);
  REQUIRE(fs::exists(path));
  Json json;
  REQUIRE_NOTHROW(json = Json::parse(jitcache::testing::read_file(path)));
  return json;
}

std::vector<std::string> files_in(const std::string& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool is_hex_key(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

TEST_CASE("process report: a program that loads a PTX twice reports a daemon compile, then a hit, with the counters") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  TempDir reports;
  const std::string path = reports.file("report.json");
  const ChildResult run = run_loader({k_ptx, "--times", "2"}, daemon.socket_path(), {{"JITCACHE_REPORT", path}});
  REQUIRE(run.status == 0);
  CHECK(run.output == "outcome compiled_by_daemon\noutcome hit\n");  // nothing of the report on stdout
  CHECK(run.errors.empty());
  CHECK(files_in(reports.path()) == std::vector<std::string>{"report.json"});  // no temporary file left

  const Json report = read_report(path);
  CHECK(report["format"] == "jitcache-process-report");
  CHECK(report["version"] == 1);
  CHECK(report["program"] == JITCACHE_REPORT_LOADER_PATH);
  CHECK(report["comm"] == fs::path(JITCACHE_REPORT_LOADER_PATH).filename().string().substr(0, 15));
  CHECK(report["exe"] == fs::canonical(JITCACHE_REPORT_LOADER_PATH).string());
  CHECK(report["pid"].get<long>() > 0);
  CHECK_FALSE(report.contains("forked_from"));

  const Json& counters = report["counters"];
  CHECK(counters["loads"] == 2);
  CHECK(counters["compiled_by_daemon"] == 1);
  CHECK(counters["hits"] == 1);
  CHECK(counters["uncached_fallbacks"] == 0);
  CHECK(counters.size() == 16);  // every field of jitcache_counters
  CHECK(report["outcomes"]["compiled_by_daemon"] == 1);
  CHECK(report["outcomes"]["hit"] == 1);
  CHECK(report["outcomes"]["uncached_fallback"] == 0);
  CHECK(report["loads_kept"] == 2);
  CHECK(report["loads_dropped"] == 0);
  CHECK(report["loads_limit"] == 4096);

  REQUIRE(report["loads"].size() == 2);
  const Json& compiled = report["loads"][0];
  const Json& hit = report["loads"][1];
  CHECK(compiled["entry_point"] == "jitcache_module_load");
  CHECK(compiled["outcome"] == "compiled_by_daemon");
  CHECK(hit["outcome"] == "hit");
  for (const Json* load : {&compiled, &hit}) {
    INFO(load->dump());
    CHECK((*load)["result"] == "CUDA_SUCCESS");
    CHECK((*load)["result_code"] == 0);
    CHECK((*load)["stage"] == "none");
    CHECK((*load)["arch"] == "sm_90a");
    CHECK(is_hex_key((*load)["key_id"].get<std::string>()));
    CHECK((*load)["ns_total"].get<std::uint64_t>() > 0);
    CHECK((*load)["ns_total"].get<std::uint64_t>() >= (*load)["ns_lookup"].get<std::uint64_t>());
    for (const char* field : {"ns_setup", "ns_classify", "ns_key", "ns_compile", "ns_load", "ns_report", "ns_put"}) {
      CHECK((*load).contains(field));
    }
    CHECK((*load)["reason"].is_string());
  }
  CHECK(compiled["key_id"] == hit["key_id"]);
  CHECK(compiled["ns_compile"].get<std::uint64_t>() > 0);
}

TEST_CASE("process report: %p gives each process its own report, and a forked child reports its own loads") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  TempDir reports;
  const ChildResult run = run_loader({k_ptx, "--times", "2", "--fork"}, daemon.socket_path(),
                                     {{"JITCACHE_REPORT", reports.file("load-%p.json")}});
  REQUIRE(run.status == 0);
  const std::vector<std::string> names = files_in(reports.path());
  REQUIRE(names.size() == 2);
  Json parent;
  Json child;
  for (const std::string& name : names) {
    const Json report = read_report(reports.file(name));
    CHECK(name == "load-" + std::to_string(report["pid"].get<long>()) + ".json");
    (report.contains("forked_from") ? child : parent) = report;
  }
  REQUIRE(parent.is_object());
  REQUIRE(child.is_object());
  CHECK(child["forked_from"] == parent["pid"]);
  CHECK(parent["loads"].size() == 2);
  CHECK(parent["counters"]["loads"] == 2);
  // The child's report starts at the fork: its one load (a hit), not the parent's two again.
  REQUIRE(child["loads"].size() == 1);
  CHECK(child["loads"][0]["outcome"] == "hit");
  CHECK(child["counters"]["loads"] == 1);
  CHECK(child["counters"]["hits"] == 1);
  CHECK(child["outcomes"]["hit"] == 1);
  CHECK(child["outcomes"]["compiled_by_daemon"] == 0);
}

TEST_CASE("process report: loads from many threads at once are all recorded") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  TempDir reports;
  const std::string path = reports.file("threads.json");
  const ChildResult run =
      run_loader({k_ptx, "--times", "0", "--threads", "16"}, daemon.socket_path(), {{"JITCACHE_REPORT", path}});
  REQUIRE(run.status == 0);
  const Json report = read_report(path);
  CHECK(report["loads"].size() == 16);
  CHECK(report["loads_dropped"] == 0);
  CHECK(report["counters"]["loads"] == 16);
  std::uint64_t by_outcome = 0;
  for (const auto& [outcome, count] : report["outcomes"].items()) by_outcome += count.get<std::uint64_t>();
  CHECK(by_outcome == 16);
  for (const Json& load : report["loads"]) CHECK(load["result"] == "CUDA_SUCCESS");
}

TEST_CASE("process report: past the limit the loads are counted but not listed") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  TempDir reports;
  // A cubin passes through without the daemon: 4100 loads take a moment, not a compile each.
  const std::string cubin = reports.file("kernel.cubin");
  const auto bytes = jitcache::testing::make_cubin(jitcache::testing::CubinSpec{}, 7, 4096);
  jitcache::testing::write_file(cubin, std::string(bytes.begin(), bytes.end()));
  const std::string path = reports.file("many.json");
  const ChildResult run = run_loader({cubin, "--times", "4100"}, daemon.socket_path(), {{"JITCACHE_REPORT", path}});
  REQUIRE(run.status == 0);
  const Json report = read_report(path);
  CHECK(report["loads_kept"] == 4096);
  CHECK(report["loads"].size() == 4096);
  CHECK(report["loads_dropped"] == 4);
  CHECK(report["outcomes"]["pass_through"] == 4100);
  CHECK(report["counters"]["pass_through"] == 4100);
  CHECK(report["loads"][0]["outcome"] == "pass_through");
}

TEST_CASE("process report: a path that cannot be written is one warning, and the program exits as it would have") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const ChildResult run =
      run_loader({k_ptx, "--times", "2"}, daemon.socket_path(), {{"JITCACHE_REPORT", "/nonexistent/dir/r.json"}});
  CHECK(run.status == 0);
  CHECK(run.output == "outcome compiled_by_daemon\noutcome hit\n");
  CHECK(run.errors ==
        "jitcache: cannot write the load report (JITCACHE_REPORT) to /nonexistent/dir/r.json: No such file or "
        "directory (JITCACHE_QUIET=1 silences this)\n");

  const ChildResult quiet = run_loader({k_ptx}, daemon.socket_path(),
                                       {{"JITCACHE_REPORT", "/nonexistent/dir/r.json"}, {"JITCACHE_QUIET", "1"}});
  CHECK(quiet.status == 0);
  CHECK(quiet.errors.empty());
}

TEST_CASE("process report: a process that loads nothing, or runs without JITCACHE_REPORT, writes nothing") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  TempDir reports;
  const ChildResult idle =
      run_loader({k_ptx, "--times", "0"}, daemon.socket_path(), {{"JITCACHE_REPORT", reports.file("idle.json")}});
  CHECK(idle.status == 0);
  const ChildResult unset = run_loader({k_ptx}, daemon.socket_path(), {{"JITCACHE_REPORT", std::nullopt}});
  CHECK(unset.status == 0);
  CHECK(files_in(reports.path()).empty());
}
