// SealedImage: a copy of an image in a sealed memfd, which a LOOKUP reply can hand to the client as
// a file descriptor (SCM_RIGHTS) instead of streaming its bytes through the socket.
//
// Rationale: a 1.6 MB cubin sent through a Unix socket costs the client ~1.2 ms on the H200 host
// (socket-buffer round trips, a fresh buffer to fault in, a copy); mapping a descriptor costs a
// fraction of that (docs/benchmarks.md). The memfd is sealed against writing, shrinking and growing
// before anyone else sees it, so a client that checked its bytes knows they cannot change under it.
// Thread safety: immutable after create(); the descriptor is closed when the last owner drops it.
#pragma once

#include <cstdint>
#include <memory>

#include <common/result.hpp>

#include <daemon/store/image_buffer.hpp>

namespace jitcache::daemon::server {

class SealedImage {
 public:
  // Errors (ErrorCode::io) name the system call that failed, e.g. memfd_create without memory.
  static common::Result<std::shared_ptr<const SealedImage>> create(const store::ImageBuffer& image);

  ~SealedImage();
  SealedImage(const SealedImage&) = delete;
  SealedImage& operator=(const SealedImage&) = delete;

  int fd() const { return m_fd; }
  std::uint64_t size() const { return m_size; }

 private:
  SealedImage(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
  int m_fd;
  std::uint64_t m_size;
};

}  // namespace jitcache::daemon::server
