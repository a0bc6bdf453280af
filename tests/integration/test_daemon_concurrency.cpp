// 64 concurrent clients doing PUT, LOOKUP by key and LOOKUP by key id against the real daemon for
// 30 s (JITCACHE_STRESS_SECONDS overrides): zero errors and zero mismatched bytes.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>

#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::TempDir;

namespace {

std::chrono::seconds stress_duration() {
  const char* v = std::getenv("JITCACHE_STRESS_SECONDS");
  return std::chrono::seconds(v != nullptr ? std::atoi(v) : 30);
}

// Every seed has one image size, so any byte served for a key can be checked against the truth.
std::size_t size_for(std::uint64_t seed) {
  static constexpr std::size_t k_sizes[] = {4096, 190 * 1024, 64, 1 << 20, 12345};
  return k_sizes[seed % 5];
}

}  // namespace

TEST_CASE("concurrency: 64 clients putting and looking up for 30 s see no errors and no wrong bytes") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();

  constexpr int k_clients = 64;
  constexpr std::uint64_t k_keys = 200;
  std::vector<std::vector<std::uint8_t>> truth(k_keys);
  for (std::uint64_t k = 0; k < k_keys; ++k) truth[k] = testing::sample_image(k, size_for(k));

  std::atomic<std::uint64_t> errors{0}, mismatches{0}, operations{0}, hits{0};
  std::atomic<bool> stop{false};
  std::mutex first_error_mutex;
  std::string first_error;
  auto record_error = [&](const std::string& what) {
    errors++;
    std::lock_guard lock(first_error_mutex);
    if (first_error.empty()) first_error = what;
  };

  std::vector<std::thread> clients;
  for (int c = 0; c < k_clients; ++c) {
    clients.emplace_back([&, c] {
      auto connected = client::transport::DaemonClient::connect(daemon.connect_options());
      if (!connected) return record_error("connect: " + connected.error().message);
      auto& client = *connected;
      std::mt19937_64 random(static_cast<std::uint64_t>(c));
      while (!stop.load()) {
        const std::uint64_t k = random() % k_keys;
        const int action = static_cast<int>(random() % 10);
        operations++;
        if (action < 2) {
          if (auto put = client.put(testing::sample_put(k, truth[k])); !put)
            record_error("put: " + put.error().message);
        } else {
          auto found = action < 8 ? client.lookup(testing::sample_key(k))
                                  : client.lookup_by_id(proto::to_hex(proto::key_id(testing::sample_key(k))));
          if (!found) {
            record_error("lookup: " + found.error().message);
          } else if (found->has_value()) {
            hits++;
            if ((*found)->image != truth[k] || (*found)->info.key != testing::sample_key(k)) mismatches++;
          }
        }
      }
    });
  }
  std::this_thread::sleep_for(stress_duration());
  stop = true;
  for (auto& t : clients) t.join();

  INFO("operations " << operations.load() << ", hits " << hits.load() << ", first error: " << first_error);
  CHECK(errors.load() == 0);
  CHECK(mismatches.load() == 0);
  CHECK(hits.load() > 0);
  CHECK(operations.load() > 1000);
  CHECK(daemon.stop() == 0);
}
