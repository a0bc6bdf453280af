// bench_fleet: what the fleet tier buys and what a dead remote costs (docs/benchmarks.md "Fleet"),
// with real daemons on a private redis-server over loopback TCP and the real compile worker.
//
//   remote hit      a fresh host's first LOOKUP of an entry a builder uploaded (remote read, checks,
//                   local store, serve), against a local compile of the same PTX and a local hit
//   cold start      H daemons x C clients COMPILE one PTX at the same moment: fleet wall time
//                   against one compile, and compiles fleet-wide (the target is one)
//   dead remote     a miss and a hit with the remote paused (SIGSTOP): the first misses wait
//                   remote_timeout, then the breaker opens; hits never touch the remote
//   herds           the documented layout, builders and consumers (1 + 7, 2 + 14), every host
//                   asking for K fresh keys, the builders first, in the middle or last (15 ms
//                   apart); the consumers alone (1 + 7) with their builder up but asked for
//                   nothing (the consumers ask it: docs/remote-layout.md "Asks"); and 2 + 6 with
//                   the compiling builder killed: compiles per key and the time until the last
//                   host was served
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
#include <tests/support/fleet_herd.hpp>
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
  unsigned herd_keys = 4;
  std::vector<std::pair<unsigned, unsigned>> herd_layouts{{1, 7}, {2, 14}};  // builders, consumers
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

// Fresh keys of `ptx`: the same kernels with a comment that makes each key's content its own.
std::vector<std::string> fresh_ptx(const std::string& ptx, const std::string& tag, unsigned count) {
  std::vector<std::string> out;
  for (unsigned k = 0; k < count; ++k) out.push_back(ptx + "\n// herd " + tag + " key " + std::to_string(k) + "\n");
  return out;
}

std::vector<FleetHost> start_herd_fleet(testing::RedisServer& redis, int db, const FleetKeys& keys, unsigned hosts,
                                        unsigned builders, unsigned compile_jobs) {
  std::vector<FleetHost> fleet;
  const std::vector<std::string> args{"--compile-jobs", std::to_string(compile_jobs), "--remote-lease-ttl", "3s"};
  for (unsigned i = 0; i < hosts; ++i) {
    fleet.push_back(start_fleet_host(redis.url() + "/" + std::to_string(db), keys, i < builders, args, "warn"));
  }
  return fleet;
}

void herds(const Options& o, testing::RedisServer& redis, const FleetKeys& keys) {
  const std::string ptx = testing::read_file(o.cold_ptx);
  std::printf("herds (%s, %u fresh keys per herd, hosts 15 ms apart)\n", o.cold_ptx.c_str(), o.herd_keys);
  std::printf("  %-22s %-8s %16s %20s\n", "layout", "builders", "compiles per key", "last host served");
  int db = 3;
  for (const auto& [builders, consumers] : o.herd_layouts) {
    const unsigned hosts = builders + consumers;
    std::vector<FleetHost> fleet = start_herd_fleet(redis, db++, keys, hosts, builders, o.herd_keys + 2);
    for (const auto arrives :
         {testing::BuilderArrives::first, testing::BuilderArrives::middle, testing::BuilderArrives::last}) {
      const std::string tag =
          std::to_string(builders) + "+" + std::to_string(consumers) + testing::arrival_name(arrives);
      const auto keys_ptx = fresh_ptx(ptx, tag, o.herd_keys);
      const auto result = testing::run_herd(fleet, testing::arrival_order(hosts, builders, arrives), keys_ptx, 15ms,
                                            std::chrono::seconds(600));
      std::printf("  %-22s %-8s %16.2f %17.0f ms%s\n",
                  (std::to_string(builders) + " builder(s) + " + std::to_string(consumers)).c_str(),
                  testing::arrival_name(arrives), static_cast<double>(result.compiles) / o.herd_keys,
                  result.last_served_ms, result.answered == hosts * o.herd_keys ? "" : " (some host was not served)");
    }
  }
  // The consumers alone: the builder is up (announced) but none of its clients asks for the keys.
  {
    const unsigned consumers = o.smoke ? 3 : 7;
    const unsigned hosts = 1 + consumers;
    std::vector<FleetHost> fleet = start_herd_fleet(redis, db++, keys, hosts, 1, o.herd_keys + 2);
    std::this_thread::sleep_for(200ms);  // the builder's first announcement is up
    std::vector<std::size_t> order;
    for (unsigned h = 1; h < hosts; ++h) order.push_back(h);
    const auto keys_ptx = fresh_ptx(ptx, "consumers only", o.herd_keys);
    const auto result = testing::run_herd(fleet, order, keys_ptx, 15ms, std::chrono::seconds(600));
    std::uint64_t on_consumers = 0;
    for (unsigned h = 1; h < hosts; ++h) on_consumers += host_stat(fleet[h], "compiles");
    std::printf("  %-22s %-8s %16.2f %17.0f ms (%llu on the consumers; asks taken %llu)%s\n",
                ("1 builder + " + std::to_string(consumers)).c_str(), "not asked",
                static_cast<double>(result.compiles) / o.herd_keys, result.last_served_ms,
                static_cast<unsigned long long>(on_consumers),
                static_cast<unsigned long long>(host_stat(fleet[0], "remote0.asks_taken")),
                result.answered == consumers * o.herd_keys ? "" : " (some host was not served)");
  }
  // The compiling builder killed: host 0 asks alone, the others once its lease is taken.
  {
    const unsigned builders = 2;
    const unsigned hosts = o.smoke ? 4 : 8;
    std::vector<FleetHost> fleet = start_herd_fleet(redis, db++, keys, hosts, builders, 2);
    const std::string text = ptx + "\n// herd takeover\n";
    const auto start = Clock::now();
    std::thread doomed([&] {
      auto client = fleet[0].daemon->client();
      (void)client.compile(testing::fleet_compile_request(text), 600s);
    });
    while (host_stat(fleet[0], "remote0.leases_won") == 0) std::this_thread::sleep_for(5ms);
    std::vector<std::thread> others;
    std::atomic<unsigned> served{0};
    std::atomic<std::int64_t> last_us{0};
    for (unsigned h = 1; h < hosts; ++h) {
      others.emplace_back([&, h] {
        auto client = fleet[h].daemon->client();
        auto answer = client.compile(testing::fleet_compile_request(text), 600s);
        if (answer && answer->kind == client::transport::CompileAnswer::Kind::compiled) ++served;
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
        std::int64_t seen = last_us.load();
        while (us > seen && !last_us.compare_exchange_weak(seen, us)) {
        }
      });
    }
    std::this_thread::sleep_for(300ms);  // the others wait on its lease
    fleet[0].daemon->kill_hard();
    doomed.join();
    for (auto& t : others) t.join();
    std::uint64_t compiles = 0;
    for (unsigned h = 1; h < hosts; ++h) compiles += host_stat(fleet[h], "compiles");
    std::printf("  %-22s %-8s %16.2f %17.0f ms (killed 300 ms in; lease ttl 3 s; %u of %u served)\n\n",
                ("2 builders + " + std::to_string(hosts - 2)).c_str(), "killed", static_cast<double>(compiles),
                static_cast<double>(last_us.load()) / 1000.0, served.load(), hosts - 1);
  }
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
  app.add_option("--herd-keys", o.herd_keys, "fresh keys per herd");
  app.add_flag("--smoke", o.smoke, "small: small_kernel.ptx, 2 daemons x 2 clients, 2 fresh hosts, herds of 1 + 3");
  CLI11_PARSE(app, argc, argv);
  if (o.smoke) {
    o.ptx = o.cold_ptx = std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx";
    o.repeat = 2;
    o.hosts = 2;
    o.clients = 2;
    o.herd_keys = 2;
    o.herd_layouts = {{1, 3}};
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
    herds(o, redis, keys);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_fleet: %s\n", e.what());
    return 1;
  }
  return 0;
}
