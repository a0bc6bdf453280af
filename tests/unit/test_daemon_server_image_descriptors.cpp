// SealedImage (a memfd copy of an image, sealed) and ImageDescriptors (the cache of them) with real
// memfds: what a client receiving the descriptor may rely on.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <vector>

#include <daemon/server/image_descriptors.hpp>
#include <daemon/server/sealed_image.hpp>

namespace {

using jitcache::daemon::server::ImageDescriptors;
using jitcache::daemon::server::SealedImage;
using jitcache::daemon::store::ImageBuffer;

std::shared_ptr<const ImageBuffer> make_image(std::size_t size, std::uint8_t seed) {
  auto image = std::make_shared<ImageBuffer>(size);
  for (std::size_t i = 0; i < size; ++i) (*image)[i] = static_cast<std::uint8_t>(i * 31 + seed);
  return image;
}

std::vector<std::uint8_t> read_all(int fd, std::size_t size) {
  std::vector<std::uint8_t> out(size);
  REQUIRE(::pread(fd, out.data(), size, 0) == static_cast<ssize_t>(size));
  return out;
}

}  // namespace

TEST_CASE("sealed image: the memfd holds exactly the image and cannot be written, shrunk or grown") {
  auto image = make_image(200'000, 3);
  auto sealed = SealedImage::create(*image);
  REQUIRE(sealed.ok());
  const int fd = (*sealed)->fd();
  CHECK((*sealed)->size() == image->size());
  CHECK(::lseek(fd, 0, SEEK_END) == static_cast<off_t>(image->size()));
  CHECK(std::ranges::equal(read_all(fd, image->size()), *image));

  const int seals = ::fcntl(fd, F_GET_SEALS);
  CHECK((seals & F_SEAL_WRITE) != 0);
  CHECK((seals & F_SEAL_SHRINK) != 0);
  CHECK((seals & F_SEAL_GROW) != 0);
  CHECK((seals & F_SEAL_SEAL) != 0);
  const std::uint8_t byte = 0;
  CHECK(::pwrite(fd, &byte, 1, 0) < 0);
  CHECK(::ftruncate(fd, 10) != 0);
  CHECK(::ftruncate(fd, static_cast<off_t>(image->size() + 4096)) != 0);
  CHECK(::mmap(nullptr, image->size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
  CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
}

TEST_CASE("image descriptors: one image gets one memfd, reused while the image lives") {
  ImageDescriptors descriptors(1 << 20, 100);
  auto image = make_image(100'000, 1);
  auto first = descriptors.get(image);
  auto second = descriptors.get(image);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(*first == *second);
  CHECK(descriptors.created() == 1);
  CHECK(descriptors.bytes() == image->size());

  auto other = make_image(100'000, 2);
  auto third = descriptors.get(other);
  REQUIRE(third.ok());
  CHECK(*third != *first);
  CHECK(std::ranges::equal(read_all((*third)->fd(), other->size()), *other));
}

TEST_CASE("image descriptors: a freed image's memfd is never handed out for a new image at its address") {
  ImageDescriptors descriptors(1 << 20, 100);
  std::shared_ptr<const SealedImage> old_sealed;
  const ImageBuffer* old_address = nullptr;
  {
    auto image = make_image(70'000, 5);
    old_address = image.get();
    auto got = descriptors.get(image);
    REQUIRE(got.ok());
    old_sealed = *got;
  }
  // Whether or not the allocator reuses the address, the new image's bytes must be served.
  for (int i = 0; i < 8; ++i) {
    auto image = make_image(70'000, static_cast<std::uint8_t>(10 + i));
    auto got = descriptors.get(image);
    REQUIRE(got.ok());
    CHECK(std::ranges::equal(read_all((*got)->fd(), image->size()), *image));
    if (image.get() == old_address) CHECK(*got != old_sealed);
  }
}

TEST_CASE("image descriptors: the cache stays within its budget, and a descriptor in use stays open") {
  ImageDescriptors descriptors(250'000, 100);
  std::vector<std::shared_ptr<const ImageBuffer>> images;
  std::vector<std::shared_ptr<const SealedImage>> held;
  for (int i = 0; i < 5; ++i) {
    images.push_back(make_image(100'000, static_cast<std::uint8_t>(i)));
    auto got = descriptors.get(images.back());
    REQUIRE(got.ok());
    held.push_back(*got);
    CHECK(descriptors.bytes() <= 250'000);
  }
  // The first image's memfd was evicted from the cache but its holder can still read it.
  CHECK(std::ranges::equal(read_all(held.front()->fd(), images.front()->size()), *images.front()));
  auto again = descriptors.get(images.front());
  REQUIRE(again.ok());
  CHECK(*again != held.front());  // made anew
  CHECK(descriptors.created() == 6);
}

TEST_CASE("image descriptors: the cache keeps at most its count of memfds however small the images") {
  ImageDescriptors descriptors(1ull << 30, 3);
  std::vector<std::shared_ptr<const ImageBuffer>> images;
  for (int i = 0; i < 10; ++i) {
    images.push_back(make_image(70'000, static_cast<std::uint8_t>(i)));
    auto got = descriptors.get(images.back());
    REQUIRE(got.ok());
    CHECK(descriptors.count() <= 3);
  }
  CHECK(descriptors.count() == 3);
  auto newest = descriptors.get(images.back());  // the most recent ones stay
  REQUIRE(newest.ok());
  CHECK(descriptors.created() == 10);

  ImageDescriptors none(1ull << 30, 0);
  auto once = none.get(images.front());
  REQUIRE(once.ok());
  CHECK(std::ranges::equal(read_all((*once)->fd(), images.front()->size()), *images.front()));
  CHECK(none.count() == 0);
}
