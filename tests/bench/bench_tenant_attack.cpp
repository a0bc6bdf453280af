// bench_tenant_attack: what one tenant's attack costs another, on the real jitcached (docs/security.md
// "Who pays for what", docs/benchmarks.md "Tenants under attack"). Three figures, each with the
// attacker running:
//
//   explain  --crowd entries of one content in uid B's namespace (planted through SQLite, as B's
//            PUTs would leave them); LOOKUP p50/p99 of another connection, quiet and while
//            4 connections flood EXPLAIN of that content; the EXPLAIN latency and how many got busy.
//   compile  B queues --compiles compiles that each run until compile_wall_time (the fault worker's
//            "hang"); how long uid A's small compile then waits for its answer. Needs root (it
//            creates two system users); skipped with a reason otherwise.
//   memory   the daemon's VmRSS and RssAnon before, right after and 1 s after a burst of
//            --burst PUTs of 60 MiB (removed at once) and COMPILEs of 40 MiB (refused too_large)
//            from 4 connections.
//
// A program that prints figures, not a timed test: it exits non-zero only when something fails.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <proto/compile_messages.hpp>
#include <proto/explain_messages.hpp>
#include <proto/jit_options.hpp>
#include <proto/key.hpp>

#include <tests/bench/machine_info.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/process_status.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::bench {
namespace {

using namespace std::chrono_literals;
using client::transport::DaemonClient;
using Clock = std::chrono::steady_clock;

constexpr double k_mib = 1024.0 * 1024.0;

struct BenchOptions {
  int crowd_doublings = 17;  // 2^17 - 1 = 131 071 planted entries
  int compiles = 8;
  int burst = 6;  // per connection
  std::string wall_time = "10s";
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

// The database file's size once its WAL is checkpointed into it.
std::uintmax_t checkpointed_size(sqlite3* db, const std::string& db_path) {
  sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  return std::filesystem::file_size(db_path);
}

// Plants 2^doublings - 1 copies of the stored entry in namespace 1001 (rows and index entries, no
// image); returns the bytes of database file they took.
std::uintmax_t plant_crowd(const std::string& db_path, int doublings) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("cannot open " + db_path);
  sqlite3_busy_timeout(db, 30'000);
  const std::uintmax_t before = checkpointed_size(db, db_path);
  for (int i = 0; i < doublings; ++i) {
    const std::string sql =
        "INSERT INTO entries (key_id, namespace, key_schema, content_digest, arch, driver_api, driver_build, options,"
        " producer, codec, raw_size, stored_size, checksum, created_at_ms, last_used_at_ms, hits, compile_time_us,"
        " content_fast, fast_key_id) SELECT randomblob(32), 1001, key_schema, content_digest, arch, driver_api,"
        " driver_build, options, producer, codec, raw_size, stored_size, checksum, created_at_ms, last_used_at_ms,"
        " hits, compile_time_us, content_fast, randomblob(32) FROM entries";
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      throw std::runtime_error(std::string("planting the crowd: ") + sqlite3_errmsg(db));
    }
  }
  const std::uintmax_t after = checkpointed_size(db, db_path);
  sqlite3_close(db);
  return after - before;
}

std::vector<double> lookups(DaemonClient& client, const proto::KeyFields& key, int count) {
  std::vector<double> ms;
  for (int i = 0; i < count; ++i) {
    const auto start = Clock::now();
    auto hit = client.lookup(key);
    if (!hit || !hit->has_value()) throw std::runtime_error("a LOOKUP of the stored key did not hit");
    ms.push_back(ms_since(start));
  }
  return ms;
}

void explain_figures(const BenchOptions& options) {
  testing::TempDir dir("jitcache-bench-attack");
  testing::DaemonProcess daemon(dir, testing::DaemonOptions{{"--worker-threads", "2"}, {}, "warn"});
  daemon.start();
  const proto::KeyFields key = testing::sample_key(1);
  const auto image = testing::sample_image(1, 4096);
  auto client = daemon.client();
  if (!client.put(testing::sample_put(1, image))) throw std::runtime_error("PUT failed");
  const std::uintmax_t crowd_bytes = plant_crowd(daemon.state_dir() + "/jitcache.db", options.crowd_doublings);
  const long crowd = (1L << options.crowd_doublings) - 1;
  std::printf("entry rows: %ld planted entries took %.1f MiB of database, %.0f bytes each without their image\n", crowd,
              static_cast<double>(crowd_bytes) / k_mib, static_cast<double>(crowd_bytes) / static_cast<double>(crowd));

  const auto quiet = lookups(client, key, 500);
  std::atomic<bool> stop{false};
  std::atomic<int> busy{0};
  std::vector<std::vector<double>> explain_ms(4);
  std::vector<std::thread> flood;
  for (int c = 0; c < 4; ++c) {
    flood.emplace_back([&, c] {
      auto attacker = daemon.client();
      while (!stop) {
        const auto start = Clock::now();
        auto reply = attacker.explain(proto::ExplainRequest{proto::ExplainSelector::key, key, {}});
        if (reply) {
          explain_ms[static_cast<std::size_t>(c)].push_back(ms_since(start));
        } else {
          ++busy;
          std::this_thread::sleep_for(1ms);
        }
      }
    });
  }
  std::this_thread::sleep_for(300ms);
  const auto flooded = lookups(client, key, 500);
  stop = true;
  for (auto& t : flood) t.join();
  std::vector<double> all_explains;
  for (const auto& v : explain_ms) all_explains.insert(all_explains.end(), v.begin(), v.end());
  std::printf("explain: %ld entries of one content in uid 1001's namespace, 4 connections flooding EXPLAIN of it\n",
              crowd);
  std::printf(
      "  LOOKUP 4 KiB hit, another connection: quiet p50 %.3f ms p99 %.3f ms; under the flood p50 %.3f ms "
      "p99 %.3f ms\n",
      percentile(quiet, 0.5), percentile(quiet, 0.99), percentile(flooded, 0.5), percentile(flooded, 0.99));
  std::printf("  EXPLAIN: %zu answered, p50 %.3f ms p99 %.3f ms; %d answered busy\n", all_explains.size(),
              percentile(all_explains, 0.5), percentile(all_explains, 0.99), busy.load());
}

proto::CompileRequest compile_request(const std::string& ptx, int n) {
  proto::CompileRequest request;
  request.arch = "sm_90";
  request.driver_api = 13000;
  request.driver_build = "580.159.04";
  auto options = proto::canonicalize_option_text("maxrreg=" + std::to_string(32 + n));
  if (!options) throw std::runtime_error("options");
  request.options = *options;
  request.ptx = proto::as_bytes(ptx);
  return request;
}

void compile_figures(const BenchOptions& options) {
  testing::SystemUsers users;
  if (!users.available()) {
    std::printf("compile: skipped (%s)\n", users.why().c_str());
    return;
  }
  testing::TempDir dir("jitcache-bench-attack-compile");
  ::chmod(dir.path().c_str(), 0755);
  testing::DaemonOptions daemon_options;
  daemon_options.extra_args = {"--compile-worker",      JITCACHE_FAULT_WORKER_PATH,
                               "--compile-failure-ttl", "0",
                               "--compile-jobs",        "2",
                               "--compile-wall-time",   options.wall_time,
                               "--socket-group",        users.group_name()};
  daemon_options.extra_env = {{"FAULT_WORKER_VERSION", "13.0"}};
  testing::DaemonProcess daemon(dir, daemon_options);
  daemon.start();
  const std::string hang = "hang\n";
  // B sends its compiles from connections it then closes: they run on (a client that leaves cancels
  // nothing).
  testing::as_user(users.b(), {users.group()}, [&] {
    for (int i = 0; i < options.compiles; ++i) {
      auto connection = client::transport::UnixConnection::connect(daemon.connect_options());
      if (!connection) return 1;
      const proto::Payload payload = proto::encode(compile_request(hang, i));
      proto::FrameHeader header;
      header.op = proto::Op::compile;
      header.request_id = 1;
      header.payload_length = payload.size();
      const auto raw = proto::encode_header(header);
      if (!connection->send_raw(proto::Bytes(raw)) || !connection->send_raw(proto::Bytes(payload))) return 2;
    }
    std::this_thread::sleep_for(500ms);
    return 0;
  });
  testing::as_user(users.a(), {users.group()}, [&] {
    auto client = DaemonClient::connect(daemon.connect_options());
    if (!client) return 1;
    const std::string ok = "ok\n";
    const auto start = Clock::now();
    auto answer = client->compile(compile_request(ok, 99), 600s);
    std::printf(
        "compile: uid B queued %d compiles of %s each (compile_jobs 2); uid A's small compile answered %s "
        "after %.0f ms\n",
        options.compiles, options.wall_time.c_str(), answer ? "compiled" : "with an error", ms_since(start));
    std::fflush(stdout);
    return 0;
  });
  daemon.kill_hard();
}

void memory_figures(const BenchOptions& options) {
  testing::TempDir dir("jitcache-bench-attack-memory");
  testing::DaemonProcess daemon(dir, testing::DaemonOptions{{"--worker-threads", "4"}, {}, "warn"});
  daemon.start();
  auto report = [&](const char* when) {
    std::printf("  %-18s VmRSS %7.1f MiB, RssAnon %7.1f MiB\n", when,
                static_cast<double>(testing::status_bytes(daemon.pid(), "VmRSS")) / k_mib,
                static_cast<double>(testing::status_bytes(daemon.pid(), "RssAnon")) / k_mib);
  };
  {
    auto client = daemon.client();
    const auto small = testing::sample_image(1, 4096);
    if (!client.put(testing::sample_put(1, small))) throw std::runtime_error("PUT failed");
  }
  std::printf("memory: 4 connections, each %d PUTs of 60 MiB (removed at once) and %d COMPILEs of 40 MiB (refused)\n",
              options.burst, options.burst);
  report("before");
  std::vector<std::thread> attackers;
  for (int c = 0; c < 4; ++c) {
    attackers.emplace_back([&, c] {
      auto client = daemon.client();
      const std::string big_ptx(40u << 20, ' ');
      for (int i = 0; i < options.burst; ++i) {
        const std::uint64_t seed = 1000 + static_cast<std::uint64_t>(c * 100 + i);
        const auto image = testing::sample_image(seed, 60u << 20);
        (void)client.put(testing::sample_put(seed, image));
        (void)client.remove(proto::to_hex(proto::key_id(testing::sample_key(seed))));
        (void)client.compile(compile_request(big_ptx, i), 10s);
      }
    });
  }
  for (auto& t : attackers) t.join();
  report("right after");
  std::this_thread::sleep_for(1s);
  report("1 s after");
}

void print_machine() {
  const MachineInfo machine = read_machine_info();
  std::printf("machine: %s, %u CPUs (%u usable), %llu MiB, %s, load average %.2f\n", machine.cpu_model.c_str(),
              machine.online_cpus, machine.usable_cpus, static_cast<unsigned long long>(machine.memory_mib),
              machine.kernel.c_str(), machine.load_average);
}

}  // namespace
}  // namespace jitcache::bench

int main(int argc, char** argv) {
  using namespace jitcache::bench;
  CLI::App app{"What one tenant's attack costs another on the real jitcached"};
  BenchOptions options;
  std::vector<std::string> parts{"explain", "compile", "memory"};
  app.add_option("--crowd-doublings", options.crowd_doublings, "planted entries of one content: 2^n - 1");
  app.add_option("--compiles", options.compiles, "compiles uid B queues");
  app.add_option("--wall-time", options.wall_time, "compile_wall_time (each of B's compiles runs this long)");
  app.add_option("--burst", options.burst, "large requests per connection");
  app.add_option("--parts", parts, "explain, compile, memory");
  CLI11_PARSE(app, argc, argv);
  try {
    print_machine();
    for (const std::string& part : parts) {
      if (part == "explain") explain_figures(options);
      else if (part == "compile") compile_figures(options);
      else if (part == "memory") memory_figures(options);
      else throw std::runtime_error("unknown part " + part);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_tenant_attack: %s\n", e.what());
    return 1;
  }
  return 0;
}
