// LOOKUP with the image handed over as a sealed memfd (PROTOCOL.md §4 "Images by descriptor"),
// against the real daemon: large images come as a descriptor only when asked for, small ones always
// as bytes, and what the client maps is exactly the stored image.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using client::transport::ImageDelivery;
using testing::DaemonProcess;
using testing::stat_value;
using testing::TempDir;

TEST_CASE("image by descriptor: a large image asked for as a descriptor is mapped, identical and verified") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const auto image = testing::sample_image(1, 1'600'000);
  auto client = daemon.client();
  REQUIRE(client.put(testing::sample_put(1, image)));

  auto hello = client.hello("test");
  REQUIRE(hello);
  CHECK((hello->capabilities & proto::k_capability_image_fd) != 0);

  for (int round = 0; round < 2; ++round) {  // a cold read, then the hot cache's memfd again
    auto found = client.lookup(testing::sample_key(1), ImageDelivery::descriptor_if_large);
    REQUIRE(found);
    REQUIRE(found->has_value());
    CHECK((*found)->mapped.mapped());
    CHECK((*found)->image.empty());
    CHECK((*found)->checksum_verified);
    CHECK(std::ranges::equal((*found)->bytes(), image));
  }
  CHECK(stat_value(client, "images_by_descriptor") == 2);

  // The same connection still speaks bytes to a request that did not ask.
  auto plain = client.lookup(testing::sample_key(1));
  REQUIRE(plain);
  REQUIRE(plain->has_value());
  CHECK_FALSE((*plain)->mapped.mapped());
  CHECK((*plain)->image == image);
  CHECK(stat_value(client, "images_by_descriptor") == 2);
}

TEST_CASE("image by descriptor: a small image comes as bytes even when a descriptor would do") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const auto image = testing::sample_image(2, 4600);
  auto client = daemon.client();
  REQUIRE(client.put(testing::sample_put(2, image)));
  auto found = client.lookup(testing::sample_key(2), ImageDelivery::descriptor_if_large);
  REQUIRE(found);
  REQUIRE(found->has_value());
  CHECK_FALSE((*found)->mapped.mapped());
  CHECK((*found)->image == image);
  CHECK(stat_value(client, "images_by_descriptor") == 0);
}

TEST_CASE("image by descriptor: a descriptor that is not sealed, too short, or not a file is refused") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  auto from_pipe = client::transport::MappedImage::map(fds[0], 10);
  CHECK_FALSE(from_pipe.ok());
  ::close(fds[0]);
  ::close(fds[1]);

  const int unsealed = ::memfd_create("unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  REQUIRE(unsealed >= 0);
  REQUIRE(::ftruncate(unsealed, 4096) == 0);
  auto open_to_writes = client::transport::MappedImage::map(unsealed, 4096);
  REQUIRE_FALSE(open_to_writes.ok());
  CHECK_THAT(open_to_writes.error().message, Catch::Contains("sealed"));
  REQUIRE(::fcntl(unsealed, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) == 0);
  auto too_short = client::transport::MappedImage::map(unsealed, 8192);
  REQUIRE_FALSE(too_short.ok());
  CHECK_THAT(too_short.error().message, Catch::Contains("4096"));
  auto fine = client::transport::MappedImage::map(unsealed, 4096);
  CHECK(fine.ok());
  ::close(unsealed);
}

TEST_CASE("image by descriptor: a compressed entry is handed over as its raw bytes, verified") {
  TempDir dir;
  DaemonProcess daemon(dir, testing::DaemonOptions{{"--compression-level", "3"}, {}, "warn"});
  daemon.start();
  // Cubin-like code: runs of similar words; zstd stores it at a fraction of its size.
  std::vector<std::uint8_t> code(1'600'000);
  for (std::size_t i = 0; i < code.size(); ++i) code[i] = static_cast<std::uint8_t>((i % 16 < 4) ? i / 16 : i % 5);
  const std::vector<std::uint8_t> image = testing::make_cubin(testing::CubinSpec{}, code);
  auto client = daemon.client();
  REQUIRE(client.put(testing::sample_put(3, image)));
  CHECK(stat_value(client, "bytes_raw") == image.size());
  CHECK(stat_value(client, "bytes_stored") < image.size() / 4);

  for (int round = 0; round < 2; ++round) {  // decompressed from the database, then from the hot cache
    auto found = client.lookup(testing::sample_key(3), ImageDelivery::descriptor_if_large);
    REQUIRE(found);
    REQUIRE(found->has_value());
    CHECK((*found)->mapped.mapped());
    CHECK((*found)->checksum_verified);
    CHECK((*found)->info.codec == 1);
    CHECK(std::ranges::equal((*found)->bytes(), image));
  }
  auto plain = client.lookup(testing::sample_key(3));
  REQUIRE(plain);
  REQUIRE(plain->has_value());
  CHECK((*plain)->image == image);
}
