// The slow-client defence (docs/security.md "Limits"): clients that trickle a request one byte every
// half second are dropped when read_deadline passes since their first byte, however steadily they
// send, and meanwhile a well-behaved client on the same daemon (two worker threads, so the slow ones
// outnumber them sixteen to one) is served as usual.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <proto/messages.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int k_slow_clients = 32;

int connect_raw(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  return fd;
}

// True once the daemon has closed the connection (EOF or a reset), without blocking.
bool closed_by_peer(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  std::uint8_t byte = 0;
  return ::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
}

}  // namespace

TEST_CASE("slow clients: trickling clients are dropped at read_deadline while a normal client keeps its latency") {
  TempDir dir;
  DaemonProcess daemon(dir, DaemonOptions{{"--read-deadline", "2s", "--worker-threads", "2"}, {}, "warn"});
  daemon.start();
  auto client = daemon.client();
  const auto image = testing::sample_image(1, 64 * 1024);
  REQUIRE(client.put(testing::sample_put(1, image)));

  // A PUT of 1 MiB announced in full, then sent one byte at a time.
  const auto frame = proto::encode_frame(proto::Op::put, proto::Status::ok, 7, proto::Payload(1 << 20, 0x5a));
  std::vector<int> slow;
  for (int i = 0; i < k_slow_clients; ++i) slow.push_back(connect_raw(daemon.socket_path()));
  std::vector<std::optional<Clock::duration>> dropped_after(k_slow_clients);
  std::atomic<bool> trickling{true};
  const auto started = Clock::now();
  std::thread trickle([&] {
    for (std::size_t offset = 0; trickling.load() && offset < frame.size(); ++offset) {
      for (int i = 0; i < k_slow_clients; ++i) {
        if (dropped_after[i]) continue;
        if (closed_by_peer(slow[i]) || ::send(slow[i], &frame[offset], 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
          dropped_after[i] = Clock::now() - started;
        }
      }
      if (std::all_of(dropped_after.begin(), dropped_after.end(), [](const auto& d) { return d.has_value(); })) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });

  // The well-behaved client: LOOKUP hits for as long as the slow ones are being dropped and a bit.
  std::vector<double> latencies_ms;
  int failures = 0;
  while (Clock::now() - started < std::chrono::seconds(6)) {
    const auto t0 = Clock::now();
    auto found = client.lookup(testing::sample_key(1));
    latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!found || !*found || (*found)->image != image) ++failures;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  trickling = false;
  trickle.join();
  for (int fd : slow) ::close(fd);

  CHECK(failures == 0);
  REQUIRE(!latencies_ms.empty());
  std::sort(latencies_ms.begin(), latencies_ms.end());
  const double worst = latencies_ms.back();
  INFO("LOOKUPs: " << latencies_ms.size() << ", median " << latencies_ms[latencies_ms.size() / 2] << " ms, worst "
                   << worst << " ms");
  // Rationale: a generous bound on a shared CI machine. A slow client that held a worker would show
  // as a wait of its whole read_deadline (2 s); this only checks that none did.
  CHECK(worst < 1000.0);
  for (int i = 0; i < k_slow_clients; ++i) {
    INFO("slow client " << i);
    REQUIRE(dropped_after[i].has_value());
    const double seconds = std::chrono::duration<double>(*dropped_after[i]).count();
    CHECK(seconds >= 1.5);
    CHECK(seconds <= 4.5);
  }
  CHECK(testing::stat_value(client, "dropped_deadline") == k_slow_clients);
  CHECK(daemon.running());
}
