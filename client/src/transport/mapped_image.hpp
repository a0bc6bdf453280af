// MappedImage: an image mapped read-only into this process, one jitcached handed over as a file
// descriptor (PROTOCOL.md §4 "Images by descriptor"), so that it is not copied on its way to the
// driver. (Published files are read, never mapped: published_reader.hpp says why.)
//
// map() trusts nothing about the descriptor: it must be a regular file (a memfd) at least `size`
// bytes long and sealed against writing, shrinking and growing, so that the bytes the client checks
// are the bytes the driver later reads. It maps with MAP_POPULATE: the pages already exist (the
// daemon's memfd), so this fills page tables without copying or zeroing anything.
// narrow() keeps the mapping but makes bytes() a part of it (the image inside a published file).
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
      : m_data(std::exchange(other.m_data, nullptr)),
        m_size(std::exchange(other.m_size, 0)),
        m_view_offset(std::exchange(other.m_view_offset, 0)),
        m_view_size(std::exchange(other.m_view_size, 0)) {}
  MappedImage& operator=(MappedImage&& other) noexcept;
  MappedImage(const MappedImage&) = delete;
  MappedImage& operator=(const MappedImage&) = delete;
  ~MappedImage();

  bool mapped() const { return m_data != nullptr; }
  proto::Bytes bytes() const {
    return proto::Bytes(static_cast<const std::uint8_t*>(m_data) + m_view_offset, m_view_size);
  }
  // `part` must lie within bytes(); the view shrinks to it, the mapping stays whole until unmapped.
  void narrow(proto::Bytes part);

 private:
  MappedImage(void* data, std::size_t size) : m_data(data), m_size(size), m_view_size(size) {}
  void* m_data = nullptr;
  std::size_t m_size = 0;  // of the whole mapping, for munmap
  std::size_t m_view_offset = 0;
  std::size_t m_view_size = 0;
};

}  // namespace jitcache::client::transport
