// bench_fleet: what the fleet tier buys and what a dead remote costs (docs/benchmarks.md "Fleet"),
// with real daemons on a private redis-server over loopback TCP and the real compile worker.
//
//   remote hit      a fresh host's first LOOKUP of an entry a builder uploaded (remote read, checks,
//                   local store, serve), against a local compile of the same PTX and a local hit
//   cold start      H daemons x C clients COMPILE one PTX at the same moment: fleet wall time
//                   against one compile, and compiles fleet-wide (the target is one)
//   dead remote     a miss and a hit with the remote paused (SIGSTOP): the first misses wait
//                   remote_timeout, then the breaker opens; hits never touch the remote
//
// Figures are printed, never asserted. `--smoke` runs it small (CI's bench label).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include <proto/compile_messages.hpp>
#include <proto/content_digest.hpp>
#include <proto/jit_options.hpp>
#include <tests/bench/machine_info.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/redis_server.hpp>
#include <tests/support/sample_entries.hpp>

namespace jitcache::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using testing::FleetHost;
using testing::FleetKeys;
using testing::host_stat;
using testing::start_fleet_host;

struct Options {
  std::string ptx;
  std::string cold_ptx;
  unsigned repeat = 5;
  unsigned hosts = 8;
  unsigned clients = 4;
  bool smoke = false;
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void must(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

void remote_hit(const Options& o, testing::RedisServer& redis, const FleetKeys& keys) {
  const std::string ptx = testing::read_file(o.ptx);
  const auto request = testing::fleet_compile_request(ptx);
  const proto::KeyFields key = proto::key_of(request, proto::content_digest(request.ptx));
  FleetHost builder = start_fleet_host(redis.url() + "/0", keys, true, {}, "warn");
  auto client = builder.daemon->client();
  auto start = Clock::now();
  auto compiled = client.compile(request, 600s);
  const double compile_ms = ms_since(start);
  must(compiled && compiled->kind == client::transport::CompileAnswer::Kind::compiled, "the builder's compile");
  const std::size_t image_bytes = compiled->image->image.size();
  while (host_stat(builder, "remote0.uploads") < 1) std::this_thread::sleep_for(5ms);
  std::vector<double> local_hits;
  for (unsigned i = 0; i < o.repeat * 4; ++i) {
    start = Clock::now();
    auto hit = client.lookup(key);
    local_hits.push_back(ms_since(start));
    must(hit && hit->has_value(), "a local hit");
  }
  std::vector<double> remote_hits;
  for (unsigned i = 0; i < o.repeat; ++i) {
    FleetHost consumer = start_fleet_host(redis.url() + "/0", keys, false, {"--remote-timeout", "2s"}, "warn");
    auto c = consumer.daemon->client();
    start = Clock::now();
    auto hit = c.lookup(key);
    remote_hits.push_back(ms_since(start));
    must(hit && hit->has_value(), "a remote hit");
  }
  std::printf("remote hit (%s, image %zu bytes, %u fresh hosts)\n", o.ptx.c_str(), image_bytes, o.repeat);
  std::printf("  local compile      %10.1f ms\n", compile_ms);
  std::printf("  remote hit         %10.2f ms median, %.2f fastest\n", median(remote_hits),
              *std::min_element(remote_hits.begin(), remote_hits.end()));
  std::printf("  local hit          %10.3f ms median\n", median(local_hits));
  std::printf("  compile/remote hit %10.0fx\n\n", compile_ms / median(remote_hits));
}

void cold_start(const Options& o, testing::RedisServer& redis, const FleetKeys& keys) {
  const std::string ptx = testing::read_file(o.cold_ptx);
  const auto request = testing::fleet_compile_request(ptx);
  double one_compile_ms = 0;
  {
    testing::RedisServer own;
    FleetHost alone = start_fleet_host(own.url() + "/0", keys, true, {}, "warn");
    auto c = alone.daemon->client();
    const auto start = Clock::now();
    auto compiled = c.compile(request, 600s);
    one_compile_ms = ms_since(start);
    must(compiled && compiled->kind == client::transport::CompileAnswer::Kind::compiled, "one compile");
  }
  std::vector<FleetHost> hosts;
  for (unsigned i = 0; i < o.hosts; ++i) hosts.push_back(start_fleet_host(redis.url() + "/1", keys, true, {}, "warn"));
  std::barrier start_line(static_cast<std::ptrdiff_t>(o.hosts * o.clients + 1));
  std::atomic<unsigned> images{0};
  std::vector<std::thread> clients;
  for (unsigned h = 0; h < o.hosts; ++h) {
    for (unsigned c = 0; c < o.clients; ++c) {
      clients.emplace_back([&, h] {
        auto client = hosts[h].daemon->client();
        start_line.arrive_and_wait();
        auto answer = client.compile(request, 600s);
        if (answer && answer->kind == client::transport::CompileAnswer::Kind::compiled) ++images;
      });
    }
  }
  start_line.arrive_and_wait();
  const auto start = Clock::now();
  for (auto& t : clients) t.join();
  const double fleet_ms = ms_since(start);
  std::uint64_t compiles = 0;
  for (auto& host : hosts) compiles += host_stat(host, "compiles");
  std::printf("cold start (%s: %u daemons x %u clients)\n", o.cold_ptx.c_str(), o.hosts, o.clients);
  std::printf("  one compile        %10.1f ms\n", one_compile_ms);
  std::printf("  fleet wall time    %10.1f ms (%.2fx one compile)\n", fleet_ms, fleet_ms / one_compile_ms);
  std::printf("  compiles, fleet    %10llu (images served: %u of %u)\n\n", static_cast<unsigned long long>(compiles),
              images.load(), o.hosts * o.clients);
}

void dead_remote(testing::RedisServer& redis, const FleetKeys& keys) {
  auto timed_lookups = [](FleetHost& host, std::uint64_t seed, int count) {
    auto client = host.daemon->client();
    std::vector<double> ms;
    for (int i = 0; i < count; ++i) {
      const auto start = Clock::now();
      (void)client.lookup(testing::sample_key(seed + static_cast<std::uint64_t>(i)));
      ms.push_back(ms_since(start));
    }
    return ms;
  };
  FleetHost plain;
  {
    plain.state = std::make_unique<testing::TempDir>("jitcache-bench-plain");
    testing::DaemonOptions options;
    options.log_level = "warn";
    plain.daemon = std::make_unique<testing::DaemonProcess>(*plain.state, options);
    plain.daemon->start();
  }
  FleetHost host = start_fleet_host(redis.url() + "/2", keys, true, {}, "warn");
  const auto image = testing::sample_image(1, 4096);
  for (FleetHost* h : {&plain, &host}) {
    auto c = h->daemon->client();
    must(c.put(testing::sample_put(1, image)).ok(), "PUT");
  }
  auto hit_ms = [](FleetHost& h) {
    auto c = h.daemon->client();
    std::vector<double> ms;
    for (int i = 0; i < 200; ++i) {
      const auto start = Clock::now();
      (void)c.lookup(testing::sample_key(1));
      ms.push_back(ms_since(start));
    }
    return median(ms);
  };
  const double live_miss = median(timed_lookups(host, 1000, 20));
  const double plain_miss = median(timed_lookups(plain, 1000, 20));
  redis.pause();
  const auto first = timed_lookups(host, 2000, 3);
  const auto after = timed_lookups(host, 3000, 50);
  const double dead_hit = hit_ms(host);
  redis.resume();
  const double plain_hit = hit_ms(plain);
  std::printf("dead remote (remote_timeout 50 ms, the remote paused with SIGSTOP)\n");
  std::printf("  miss, no remote           %8.3f ms median\n", plain_miss);
  std::printf("  miss, live remote         %8.3f ms median\n", live_miss);
  std::printf("  miss, dead remote, first  %8.1f / %.1f / %.1f ms (until the breaker opens)\n", first[0], first[1],
              first[2]);
  std::printf("  miss, dead remote, after  %8.3f ms median\n", median(after));
  std::printf("  hit, no remote            %8.3f ms median\n", plain_hit);
  std::printf("  hit, dead remote          %8.3f ms median\n\n", dead_hit);
}

}  // namespace
}  // namespace jitcache::bench

int main(int argc, char** argv) {
  using namespace jitcache::bench;
  Options o;
  o.ptx = std::string(JITCACHE_TEST_DATA_DIR) + "/cub_kernels.ptx";
  o.cold_ptx = std::string(JITCACHE_TEST_DATA_DIR) + "/mid_kernels.ptx";
  CLI::App app{"bench_fleet: the fleet tier's remote hit, cold start and dead-remote costs"};
  app.add_option("--ptx", o.ptx, "PTX for the remote-hit figures");
  app.add_option("--cold-ptx", o.cold_ptx, "PTX for the cold start");
  app.add_option("--repeat", o.repeat, "fresh hosts for the remote hit");
  app.add_option("--hosts", o.hosts, "daemons in the cold start");
  app.add_option("--clients", o.clients, "clients per daemon in the cold start");
  app.add_flag("--smoke", o.smoke, "small: small_kernel.ptx, 2 daemons x 2 clients, 2 fresh hosts");
  CLI11_PARSE(app, argc, argv);
  if (o.smoke) {
    o.ptx = o.cold_ptx = std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx";
    o.repeat = 2;
    o.hosts = 2;
    o.clients = 2;
  }
  try {
    const MachineInfo machine = read_machine_info();
    std::printf("machine: %s, %u CPUs, %llu MiB, load %.2f\n\n", machine.cpu_model.c_str(), machine.usable_cpus,
                static_cast<unsigned long long>(machine.memory_mib), machine.load_average);
    jitcache::testing::RedisServer redis;
    jitcache::testing::FleetKeys keys;
    remote_hit(o, redis, keys);
    cold_start(o, redis, keys);
    dead_remote(redis, keys);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_fleet: %s\n", e.what());
    return 1;
  }
  return 0;
}
