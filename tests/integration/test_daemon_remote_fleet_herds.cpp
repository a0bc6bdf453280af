// One compile per fleet whoever asks first (docs/operations.md "A fleet"): real jitcached daemons,
// builders and consumers as the docs lay them out, on a real redis-server on loopback, compiling
// with the fault worker's slow mode (tests/fakes/fault_compile_worker.cpp) so that a herd meets one
// compile and every compile is counted:
//   - herds of 1 builder + 7 consumers and 2 + 14, the builders first, in the middle and last of
//     the order the hosts ask in, 10 fresh keys each: one compile per key every time;
//   - the compiling builder killed mid-compile: one takeover compile, consumers included;
//   - Redis paused for 300 ms (SIGSTOP/SIGCONT) as a herd starts: one compile;
//   - Redis behind a proxy that adds 20 ms: local hits as fast as without a remote.
// JITCACHE_FLEET_SOAK=1 repeats the herds ten times.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include <proto/content_digest.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/fleet_herd.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/redis_server.hpp>
#include <tests/support/sample_entries.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;

namespace {

const std::vector<std::pair<std::string, std::string>> k_fault_env{{"FAULT_WORKER_VERSION", "13.0"}};

// Every host compiles with the fault worker, ten at a time (a herd's keys all start at once, so a
// builder reaches each key's lease while the consumers still wait for it), with short leases.
std::vector<std::string> herd_args(std::vector<std::string> more = {}) {
  std::vector<std::string> args{"--compile-worker",   JITCACHE_FAULT_WORKER_PATH,
                                "--compile-jobs",     "12",
                                "--remote-lease-ttl", "2s"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::vector<FleetHost> start_fleet(RedisServer& redis, const FleetKeys& keys, std::size_t hosts, std::size_t builders,
                                   std::vector<std::string> more = {}) {
  std::vector<FleetHost> fleet;
  for (std::size_t i = 0; i < hosts; ++i) {
    fleet.push_back(start_fleet_host(redis.url() + "/0", keys, i < builders, herd_args(more), "info", k_fault_env));
  }
  return fleet;
}

std::vector<std::string> fresh_keys(const std::string& tag, unsigned ms, std::size_t count = 10) {
  std::vector<std::string> ptx;
  for (std::size_t k = 0; k < count; ++k) ptx.push_back(slow_ptx(ms, tag + " key " + std::to_string(k)));
  return ptx;
}

int rounds() {
  const char* soak = std::getenv("JITCACHE_FLEET_SOAK");
  return soak != nullptr && *soak == '1' ? 10 : 1;
}

void herds_cost_one_compile_per_key(std::size_t hosts, std::size_t builders) {
  RedisServer redis;
  FleetKeys keys;
  std::vector<FleetHost> fleet = start_fleet(redis, keys, hosts, builders);
  for (int round = 0; round < rounds(); ++round) {
    for (const BuilderArrives arrives : {BuilderArrives::first, BuilderArrives::middle, BuilderArrives::last}) {
      const std::string tag = std::to_string(builders) + "+" + std::to_string(hosts - builders) + " builder " +
                              arrival_name(arrives) + " round " + std::to_string(round);
      INFO(tag);
      const auto ptx = fresh_keys(tag, 400);
      const HerdResult result = run_herd(fleet, arrival_order(hosts, builders, arrives), ptx, 15ms);
      CHECK(result.answered == hosts * ptx.size());
      CHECK(result.compiles == ptx.size());
    }
  }
}

}  // namespace

TEST_CASE("fleet herds: 1 builder + 7 consumers, the builder first, in the middle or last: one compile per key") {
  herds_cost_one_compile_per_key(8, 1);
}

TEST_CASE("fleet herds: 2 builders + 14 consumers, the builders first, in the middle or last: one compile per key") {
  herds_cost_one_compile_per_key(16, 2);
}

TEST_CASE("fleet herds: the compiling builder killed mid-compile costs one takeover compile, consumers included") {
  RedisServer redis;
  FleetKeys keys;
  std::vector<FleetHost> fleet = start_fleet(redis, keys, 8, 2);
  const std::string ptx = slow_ptx(3000, "takeover");
  std::thread doomed([&] {
    auto client = fleet[0].daemon->client();
    (void)client.compile(fleet_compile_request(ptx), 60s);  // fails when the daemon dies
  });
  REQUIRE(eventually([&] {
    return redis.cli({"--scan", "--pattern", "jitcache:lease:*"}).find("lease") != std::string::npos;
  }));
  std::atomic<int> served{0};
  std::vector<std::thread> others;
  for (std::size_t h = 1; h < fleet.size(); ++h) {
    others.emplace_back([&, h] {
      auto client = fleet[h].daemon->client();
      auto answer = client.compile(fleet_compile_request(ptx), 120s);
      if (answer && answer->kind == client::transport::CompileAnswer::Kind::compiled && answer->image) ++served;
    });
  }
  REQUIRE(eventually([&] {
    for (std::size_t h = 1; h < fleet.size(); ++h) {
      if (host_stat(fleet[h], "remote0.leases_waited") == 0) return false;
    }
    return true;
  }));
  fleet[0].daemon->kill_hard();
  doomed.join();
  for (auto& t : others) t.join();
  CHECK(served == 7);
  std::uint64_t compiles = 0;
  for (std::size_t h = 1; h < fleet.size(); ++h) compiles += host_stat(fleet[h], "compiles");
  CHECK(compiles == 1);
  CHECK(host_stat(fleet[1], "compiles") == 1);  // the surviving builder took over
}

TEST_CASE("fleet herds: Redis paused for 300 ms as a herd starts costs one compile") {
  RedisServer redis;
  FleetKeys keys;
  std::vector<FleetHost> fleet = start_fleet(redis, keys, 8, 4);
  for (int round = 0; round < rounds(); ++round) {
    const std::string ptx = slow_ptx(400, "paused " + std::to_string(round));
    std::thread pauser([&] {
      std::this_thread::sleep_for(40ms);  // the herd's first LOOKUPs and leases are on their way
      redis.pause();
      std::this_thread::sleep_for(300ms);
      redis.resume();
    });
    const HerdResult result = run_herd(fleet, arrival_order(8, 4, BuilderArrives::middle), {ptx}, 5ms);
    pauser.join();
    CHECK(result.answered == 8);
    CHECK(result.compiles == 1);
  }
}

namespace {

// A TCP proxy on loopback that holds every chunk `delay` before passing it on, both ways: a Redis
// `2 * delay` further away. One thread per direction of each connection.
class DelayingProxy {
 public:
  DelayingProxy(std::uint16_t target, std::chrono::milliseconds delay) : m_target(target), m_delay(delay) {
    m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    m_port = ntohs(addr.sin_port);
    REQUIRE(::listen(m_listen, 64) == 0);
    m_acceptor = std::thread([this] { accept_loop(); });
  }
  ~DelayingProxy() {
    m_stop = true;
    ::shutdown(m_listen, SHUT_RDWR);
    ::close(m_listen);
    m_acceptor.join();
    for (int fd : m_fds) ::shutdown(fd, SHUT_RDWR);
    for (auto& t : m_pumps) t.join();
    for (int fd : m_fds) ::close(fd);
  }
  std::uint16_t port() const { return m_port; }

 private:
  void accept_loop() {
    while (!m_stop) {
      const int client = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) return;
      const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(m_target);
      if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(client);
        ::close(server);
        continue;
      }
      const int one = 1;
      ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      m_fds.push_back(client);
      m_fds.push_back(server);
      m_pumps.emplace_back([this, client, server] { pump(client, server); });
      m_pumps.emplace_back([this, client, server] { pump(server, client); });
    }
  }
  void pump(int from, int to) {
    std::vector<char> buffer(1 << 16);
    for (;;) {
      const ssize_t n = ::read(from, buffer.data(), buffer.size());
      if (n <= 0) break;
      std::this_thread::sleep_for(m_delay);
      // MSG_NOSIGNAL: a side that has gone must end this pump, not the test process (SIGPIPE).
      if (::send(to, buffer.data(), static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
    }
    ::shutdown(to, SHUT_WR);
  }

  std::uint16_t m_target;
  std::chrono::milliseconds m_delay;
  int m_listen = -1;
  std::uint16_t m_port = 0;
  std::atomic<bool> m_stop{false};
  std::thread m_acceptor;
  std::vector<int> m_fds;  // acceptor thread only, until it is joined
  std::vector<std::thread> m_pumps;
};

// The median time of `count` LOOKUPs of `key` (hits), in ms, while `missers` threads keep asking
// for keys nobody has (each of which asks the remote, if there is one).
double hit_p50_ms(FleetHost& host, const proto::KeyFields& key, int count, int missers) {
  std::atomic<bool> done{false};
  std::vector<std::thread> load;
  for (int m = 0; m < missers; ++m) {
    load.emplace_back([&, m] {
      auto client = host.daemon->client();
      for (std::uint64_t n = 0; !done; ++n) {
        proto::KeyFields missing = key;
        missing.content.bytes[0] ^= static_cast<std::uint8_t>(m + 1);
        missing.content.bytes[1] = static_cast<std::uint8_t>(n);
        missing.content.bytes[2] = static_cast<std::uint8_t>(n >> 8);
        (void)client.lookup(missing);
      }
    });
  }
  std::this_thread::sleep_for(100ms);
  auto client = host.daemon->client();
  std::vector<double> ms;
  for (int i = 0; i < count; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto found = client.lookup(key);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    REQUIRE(found.ok());
    REQUIRE(found->has_value());
  }
  done = true;
  for (auto& t : load) t.join();
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

TEST_CASE("fleet herds: a Redis 20 ms away slows no local hit, with misses going to it meanwhile") {
  RedisServer redis;
  DelayingProxy proxy(redis.port(), 10ms);
  FleetKeys keys;
  // Two worker threads: before the remote lane, two misses waiting on the remote held both.
  const std::vector<std::string> args{"--worker-threads", "2"};
  FleetHost slow_remote =
      start_fleet_host("redis://127.0.0.1:" + std::to_string(proxy.port()) + "/0", keys, false, args);
  DaemonOptions plain_options;
  plain_options.extra_args = args;
  FleetHost plain;
  plain.state = std::make_unique<TempDir>("jitcache-fleet-plain");
  plain.daemon = std::make_unique<DaemonProcess>(*plain.state, plain_options);
  plain.daemon->start();

  const auto image = sample_image(7, 4096);
  const auto put = sample_put(7, image);
  for (FleetHost* host : {&slow_remote, &plain}) {
    auto client = host->daemon->client();
    REQUIRE(client.put(put).ok());
  }
  const proto::KeyFields key = put.key;
  const double without = hit_p50_ms(plain, key, 400, 2);
  const double with = hit_p50_ms(slow_remote, key, 400, 2);
  INFO("local hit p50: " << without << " ms without a remote, " << with << " ms with a Redis 20 ms away");
  CHECK(host_stat(slow_remote, "remote0.lookups") > 0);  // the misses did go to the remote
  CHECK(with <= without + 0.1);
  CHECK(host_stat(slow_remote, "remote0.breaker_opens") == 0);
}
