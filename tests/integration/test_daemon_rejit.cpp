// The re-JIT after a driver upgrade or a new arch (daemon/rejit/, docs/operations.md "Upgrading the
// driver") against the real jitcached with the real jitcache-compile worker (nvJitLink, no GPU):
// programs linking libjitcache (tests/integration/report_loader.cpp) run with the fake driver at
// one driver version, then at another; the daemon compiles the first version's hot set for the
// second from the sources it kept, so the second program's first load hits; a tiny rejit_budget
// stops the batch and counts what it left; a new arch asked for gets the other arch's hot set; a
// daemon told to stop while a batch's compile hangs stops at once.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <string>
#include <vector>

#include <proto/compile_messages.hpp>
#include <proto/content_digest.hpp>
#include <proto/jit_options.hpp>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/sqlite_text_query.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using namespace std::chrono_literals;
using testing::ChildResult;
using testing::DaemonProcess;
using testing::EnvChange;
using testing::TempDir;

namespace {

const std::string k_small_ptx = JITCACHE_TEST_DATA_DIR "/small_kernel.ptx";

#ifdef JITCACHE_REPORT_LOADER_PATH
// A module of its own for each program: the small kernel with a comment that makes its content
// (and so its key) differ.
std::string program_module(const TempDir& dir, const std::string& name) {
  const std::string path = dir.file(name + ".ptx");
  testing::write_file(path, testing::read_file(k_small_ptx) + "\n// the module of " + name + "\n");
  return path;
}

// One run of a program that loads `module` once with the fake driver at `driver_version`; returns
// the outcome it printed.
std::string run_program(const DaemonProcess& daemon, const std::string& module, const std::string& driver_version) {
  const std::vector<EnvChange> env{{"JITCACHE_SOCKET", daemon.socket_path()},
                                   {"JITCACHE_CUDA_DRIVER", JITCACHE_FAKE_CUDA_DRIVER},
                                   {"FAKE_CUDA_CC", "90"},
                                   {"FAKE_CUDA_DRIVER_VERSION", driver_version}};
  ChildResult run = testing::run_child_captured({JITCACHE_REPORT_LOADER_PATH, module}, env, 60s);
  INFO("stdout: " << run.output << "\nstderr: " << run.errors);
  REQUIRE(run.status == 0);
  return run.output;
}

std::uint64_t stat(const DaemonProcess& daemon, const std::string& name) {
  auto client = daemon.client();
  return testing::stat_value(client, name);
}
#endif

// The batch's log line (rejit.cpp), once the batch has ended.
std::string batch_line(const DaemonProcess& daemon) {
  const std::string log = testing::read_file(daemon.log_path());
  const auto planned = log.find(": planned ");
  if (planned == std::string::npos) return std::string();
  const auto at = log.rfind("re-JIT ", planned);
  return at == std::string::npos ? std::string() : log.substr(at, log.find('\n', at) - at);
}

testing::DaemonOptions logging_info(std::vector<std::pair<std::string, std::string>> env = {}) {
  testing::DaemonOptions options;
  options.extra_env = std::move(env);
  options.log_level = "info";
  return options;
}

}  // namespace

#ifdef JITCACHE_REPORT_LOADER_PATH  // a build with libjitcache (tests/CMakeLists.txt)
TEST_CASE(
    "rejit: after a driver switch the daemon compiles the old driver's hot set again, and the next program hits") {
  TempDir dir;
  DaemonProcess daemon(dir, logging_info());
  daemon.start();
  const std::string first = program_module(dir, "first");
  const std::string second = program_module(dir, "second");

  // Driver 13.0: two programs, each module compiled by the daemon, its PTX kept.
  CHECK(run_program(daemon, first, "13000") == "outcome compiled_by_daemon\n");
  CHECK(run_program(daemon, second, "13000") == "outcome compiled_by_daemon\n");
  CHECK(stat(daemon, "sources") == 2);
  CHECK(stat(daemon, "source_bytes") > 0);
  CHECK(stat(daemon, "rejit_batches") == 0);

  // Driver 13.1 (an upgrade): the first program misses and its ask starts the re-JIT of both.
  CHECK(run_program(daemon, first, "13010") == "outcome compiled_by_daemon\n");
  REQUIRE(testing::eventually([&] { return !batch_line(daemon).empty(); }, 30s));
  const std::string line = batch_line(daemon);
  INFO(line);
  CHECK(line.find("re-JIT driver 13000/") == 0);
  CHECK(line.find("-> driver 13010/") != std::string::npos);
  CHECK(line.find("failed 0, over budget 0") != std::string::npos);
  CHECK(stat(daemon, "rejit_batches") == 1);
  CHECK(stat(daemon, "rejit_compiled") >= 1);
  CHECK(stat(daemon, "rejit_failed") == 0);
  CHECK(stat(daemon, "rejit_over_budget") == 0);
  CHECK(stat(daemon, "rejit_compile_microseconds") > 0);
  // Within the default budget of 600 s.
  CHECK(stat(daemon, "rejit_compile_microseconds") <= 600'000'000);

  // The second program's first load under the new driver is a hit.
  CHECK(run_program(daemon, second, "13010") == "outcome hit\n");
  // Entries of one source share it: still two.
  CHECK(stat(daemon, "sources") == 2);
  // Asking again starts nothing.
  CHECK(run_program(daemon, first, "13010") == "outcome hit\n");
  CHECK(stat(daemon, "rejit_batches") == 1);
}

TEST_CASE("rejit: a batch stops at rejit_budget and counts the entries it left") {
  TempDir dir;
  DaemonProcess daemon(dir, logging_info({{"JITCACHE_REJIT_BUDGET", "1ms"}}));
  daemon.start();
  const std::string first = program_module(dir, "first");
  const std::string other = program_module(dir, "other");
  CHECK(run_program(daemon, first, "13000") == "outcome compiled_by_daemon\n");

  // Under the new driver a program of another module asks first: the old driver's one entry took
  // far more than 1 ms to compile, so the batch compiles nothing.
  CHECK(run_program(daemon, other, "13010") == "outcome compiled_by_daemon\n");
  REQUIRE(testing::eventually([&] { return !batch_line(daemon).empty(); }, 30s));
  INFO(batch_line(daemon));
  CHECK(batch_line(daemon).find("planned 1, compiled 0, failed 0, over budget 1") != std::string::npos);
  CHECK(stat(daemon, "rejit_batches") == 1);
  CHECK(stat(daemon, "rejit_over_budget") == 1);
  CHECK(stat(daemon, "rejit_compiled") == 0);
  CHECK(stat(daemon, "rejit_compile_microseconds") == 0);
  CHECK(run_program(daemon, first, "13010") == "outcome compiled_by_daemon\n");
}
#endif

TEST_CASE("rejit: a new arch asked for gets the hot set of the driver's other arch") {
  TempDir dir;
  DaemonProcess daemon(dir, logging_info());
  daemon.start();
  auto client = daemon.client();
  const std::string ptx = testing::read_file(k_small_ptx);
  proto::CompileRequest request;
  request.arch = "sm_90";
  request.driver_api = 13000;
  request.driver_build = "580.159.04";
  request.options = proto::default_option_text();
  request.ptx = proto::as_bytes(ptx);
  auto compiled = client.compile(request, 60s);
  REQUIRE(compiled);
  REQUIRE(compiled->kind == client::transport::CompileAnswer::Kind::compiled);

  // A client on a new GPU (sm_100) of the same driver asks: a miss, and the re-JIT starts.
  proto::KeyFields wanted = proto::key_of(request, proto::content_digest(request.ptx));
  wanted.arch = "sm_100";
  auto missed = client.lookup(wanted);
  REQUIRE(missed);
  CHECK_FALSE(missed->has_value());
  REQUIRE(testing::eventually([&] { return !batch_line(daemon).empty(); }, 30s));
  INFO(batch_line(daemon));
  CHECK(batch_line(daemon).find("re-JIT the other archs of driver 13000/580.159.04 -> arch sm_100: planned 1, "
                                "compiled 1") == 0);
  auto hit = client.lookup(wanted);
  REQUIRE(hit);
  CHECK(hit->has_value());
}

TEST_CASE("rejit: a daemon stopped while a batch's compile hangs stops at once") {
  TempDir dir;
  // The fault worker (tests/fakes/fault_compile_worker.cpp) compiles "ok" PTX at once and hangs on
  // "hang" PTX, up to the wall-time limit, far longer than the stop may take.
  DaemonProcess daemon(dir, {{"--compile-worker", JITCACHE_FAULT_WORKER_PATH, "--compile-wall-time", "120s"},
                             {{"FAULT_WORKER_VERSION", "13.0"}},
                             "info"});
  daemon.start();
  auto client = daemon.client();
  const std::string ok = "ok";
  proto::CompileRequest request;
  request.arch = "sm_90";
  request.driver_api = 13000;
  request.driver_build = "580.159.04";
  request.options = proto::default_option_text();
  request.ptx = proto::as_bytes(ok);
  auto compiled = client.compile(request, 60s);
  REQUIRE(compiled);
  REQUIRE(compiled->kind == client::transport::CompileAnswer::Kind::compiled);

  // Its kept source becomes PTX that hangs the worker (the entry's content digest with it, so the
  // source still checks out when read back).
  const std::string hang = "hang";
  const std::string digest = proto::to_hex(proto::content_digest(proto::as_bytes(hang)));
  const std::string db = daemon.state_dir() + "/jitcache.db";
  REQUIRE(testing::query_text(db, "SELECT COUNT(*) FROM sources") == "1");
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &handle) == SQLITE_OK);
  const std::string update = "UPDATE sources SET content_digest = x'" + digest +
                             "', codec = 0, raw_size = 4, stored_size = 4, data = CAST('hang' AS BLOB);"
                             " UPDATE entries SET content_digest = x'" +
                             digest + "'";
  CHECK(sqlite3_exec(handle, update.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(handle);

  // A new driver asked for: the batch starts its one compile, which hangs.
  proto::KeyFields upgraded = proto::key_of(request, proto::content_digest(request.ptx));
  upgraded.driver_api = 13010;
  auto missed = client.lookup(upgraded);
  REQUIRE(missed);
  REQUIRE(testing::eventually([&] { return testing::stat_value(client, "compile_running") == 1; }, 20s));

  const auto asked = std::chrono::steady_clock::now();
  CHECK(daemon.stop() == 0);
  CHECK(std::chrono::steady_clock::now() - asked < 10s);
  // The batch says it was stopped, its compile neither done nor failed.
  INFO(batch_line(daemon));
  CHECK(batch_line(daemon).find("planned 1, compiled 0, failed 0") != std::string::npos);
  CHECK(batch_line(daemon).find("(stopped: the daemon is stopping)") != std::string::npos);
}
