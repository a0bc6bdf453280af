// File descriptors (docs/operations.md "File descriptors"): the daemon raises its soft limit to the
// hard one, keeps only its share of memfds however many distinct images are served by descriptor,
// and keeps accepting new clients; when descriptors do run out, a LOOKUP by descriptor is served as
// bytes and a failing accept pauses, each with a counter and a few log lines, not one per failure.
// The real daemon under a limit set in its process (setrlimit before exec, prlimit(2) after).
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <proto/messages.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/process_status.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using client::transport::DaemonClient;
using client::transport::ImageDelivery;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::TempDir;
using namespace std::chrono_literals;

namespace {

// Above the daemon's 64 KiB threshold for sending an image by descriptor.
constexpr std::size_t k_image_size = 70'000;

std::size_t log_lines(const DaemonProcess& daemon, const std::string& containing = "") {
  std::istringstream log(testing::read_file(daemon.log_path()));
  std::size_t count = 0;
  for (std::string line; std::getline(log, line);) {
    if (line.find(containing) != std::string::npos) ++count;
  }
  return count;
}

void put_images(DaemonClient& client, std::uint64_t count) {
  for (std::uint64_t seed = 1; seed <= count; ++seed) {
    REQUIRE(client.put(testing::sample_put(seed, testing::sample_image(seed, k_image_size))));
  }
}

// A new descriptor takes the lowest free number, so a limit at that number leaves none.
rlim_t lowest_free_descriptor(pid_t pid) {
  std::vector<rlim_t> open;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    open.push_back(std::stoul(entry.path().filename().string()));
  }
  std::sort(open.begin(), open.end());
  rlim_t free = 0;
  for (rlim_t fd : open) {
    if (fd != free) break;
    ++free;
  }
  return free;
}

bool new_clients_served(const DaemonProcess& daemon, int count) {
  for (int i = 0; i < count; ++i) {
    auto options = daemon.connect_options();
    options.io_timeout = 5s;
    auto client = DaemonClient::connect(options);
    if (!client || !client->ping()) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("descriptor limit: raised to the hard limit, memfds bounded by it, and new clients still served") {
  TempDir dir;
  DaemonOptions options{{}, {}, "info"};
  options.descriptor_limit = std::make_pair(std::uint64_t{128}, std::uint64_t{256});
  DaemonProcess daemon(dir, options);
  daemon.start();
  const auto limit = testing::descriptor_limit(daemon.pid());
  CHECK(limit.soft == 256);
  CHECK(limit.hard == 256);
  CHECK(log_lines(daemon, "descriptor limit raised from 128 to 256") == 1);

  auto client = daemon.client();
  constexpr std::uint64_t k_images = 400;  // distinct images: more than the limit has descriptors
  put_images(client, k_images);
  const std::size_t lines_before = log_lines(daemon);
  for (std::uint64_t seed = 1; seed <= k_images; ++seed) {
    auto found = client.lookup(testing::sample_key(seed), ImageDelivery::descriptor_if_large);
    REQUIRE(found);
    REQUIRE(found->has_value());
    REQUIRE((*found)->bytes().size() == k_image_size);
  }
  const std::size_t open = testing::open_descriptors(daemon.pid());
  INFO("the daemon holds " << open << " descriptors");
  CHECK(open < 200);  // the plan keeps a quarter of the limit free
  CHECK(testing::stat_value(client, "images_by_descriptor") == k_images);
  CHECK(testing::stat_value(client, "images_by_descriptor_failed") == 0);
  CHECK(testing::stat_value(client, "accept_failures") == 0);
  CHECK(new_clients_served(daemon, 20));
  CHECK(log_lines(daemon) - lines_before < 10);
}

TEST_CASE("descriptor limit: out of descriptors, LOOKUPs are served as bytes and accept pauses, with few log lines") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  constexpr std::uint64_t k_images = 200;
  constexpr int k_probes = 20;
  put_images(client, k_images + k_probes);

  // No descriptor left for the daemon: its soft limit becomes its lowest free descriptor number.
  rlimit saved{};
  REQUIRE(::prlimit(daemon.pid(), RLIMIT_NOFILE, nullptr, &saved) == 0);
  // Rationale: a descriptor the daemon closes after it was counted (a pipe of its compile worker's
  // probe, a statement's temporary file, the memfd of a reply just sent) is free again under the new
  // limit: apply it again until a probe LOOKUP gets its image as bytes. Each probe asks for an image
  // of its own: the daemon keeps an image's sealed memfd while the image is cached
  // (daemon/server/image_descriptors.hpp), so a second probe of one image needs no new descriptor
  // and would never see the limit.
  bool exhausted_for_lookups = false;
  for (int attempt = 0; attempt < k_probes && !exhausted_for_lookups; ++attempt) {
    const rlimit exhausted{lowest_free_descriptor(daemon.pid()), saved.rlim_max};
    REQUIRE(::prlimit(daemon.pid(), RLIMIT_NOFILE, &exhausted, nullptr) == 0);
    auto probe = client.lookup(testing::sample_key(k_images + 1 + static_cast<std::uint64_t>(attempt)),
                               ImageDelivery::descriptor_if_large);
    REQUIRE(probe);
    REQUIRE(probe->has_value());
    exhausted_for_lookups = !(*probe)->mapped.mapped();
  }
  REQUIRE(exhausted_for_lookups);
  const std::uint64_t failed_before = testing::stat_value(client, "images_by_descriptor_failed");

  for (std::uint64_t seed = 1; seed <= k_images; ++seed) {
    auto found = client.lookup(testing::sample_key(seed), ImageDelivery::descriptor_if_large);
    REQUIRE(found);
    REQUIRE(found->has_value());
    CHECK_FALSE((*found)->mapped.mapped());
    REQUIRE((*found)->bytes().size() == k_image_size);
  }
  CHECK(testing::stat_value(client, "images_by_descriptor_failed") - failed_before == k_images);

  // A client that connects now waits in the backlog while accept fails, and is served once
  // descriptors are back.
  auto waiting = client::transport::UnixConnection::connect(daemon.connect_options());
  REQUIRE(waiting);
  const auto ping = proto::encode_frame(proto::Op::ping, proto::Status::ok, 7, {});
  REQUIRE(waiting->send_raw(proto::Bytes(ping)));
  std::this_thread::sleep_for(1s);
  CHECK(testing::stat_value(client, "accept_failures") > 0);
  REQUIRE(::prlimit(daemon.pid(), RLIMIT_NOFILE, &saved, nullptr) == 0);
  auto pong = waiting->read_reply(std::chrono::steady_clock::now() + 10s);
  REQUIRE(pong);
  CHECK(pong->header.request_id == 7);
  CHECK(new_clients_served(daemon, 5));

  CHECK(log_lines(daemon, "not by descriptor") <= 2);
  CHECK(log_lines(daemon, "accept failed") <= 2);
  CHECK(daemon.running());
}
