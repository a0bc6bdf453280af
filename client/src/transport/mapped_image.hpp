// MappedImage: an image jitcached handed over as a file descriptor (PROTOCOL.md §4 "Images by
// descriptor"), mapped read-only into this process.
//
// map() trusts nothing about the descriptor: it must be a regular file (a memfd) at least `size`
// bytes long and sealed against writing, shrinking and growing, so that the bytes the client checks
// are the bytes the driver later reads. The pages are mapped with MAP_POPULATE: they already exist
// in the daemon's memfd, so this fills page tables without copying or zeroing anything.
// Thread safety: a move-only value type; the mapping is read-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <common/result.hpp>
#include <proto/digest.hpp>

namespace jitcache::client::transport {

class MappedImage {
 public:
  static common::Result<MappedImage> map(int fd, std::uint64_t size);

  MappedImage() = default;
  MappedImage(MappedImage&& other) noexcept
      : m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0)) {}
  MappedImage& operator=(MappedImage&& other) noexcept;
  MappedImage(const MappedImage&) = delete;
  MappedImage& operator=(const MappedImage&) = delete;
  ~MappedImage();

  bool mapped() const { return m_data != nullptr; }
  proto::Bytes bytes() const { return proto::Bytes(static_cast<const std::uint8_t*>(m_data), m_size); }

 private:
  MappedImage(void* data, std::size_t size) : m_data(data), m_size(size) {}
  void* m_data = nullptr;
  std::size_t m_size = 0;
};

}  // namespace jitcache::client::transport
