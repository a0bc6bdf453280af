// Sending and receiving bytes with a file descriptor attached (SCM_RIGHTS), which Asio has no call
// for. Thread safety: free functions on a socket the caller alone writes to or reads from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <common/unique_fd.hpp>

#include <common/result.hpp>
#include <proto/digest.hpp>

namespace jitcache::daemon::server {

// One non-blocking sendmsg of `bytes` with `fd` attached to the first byte. Returns how many bytes
// the socket took (at least 1: the descriptor has gone with them); ErrorCode::unavailable when the
// socket is full (wait until it is writable and call again); ErrorCode::io for anything else.
common::Result<std::size_t> send_with_descriptor(int socket, proto::Bytes bytes, int fd);

struct Received {
  std::size_t bytes = 0;  // 0: the peer closed the connection
  common::UniqueFd fd;    // the first descriptor that came with them, if any (others are closed)
};

// One non-blocking recvmsg into `buffer`, taking any descriptors that come with the bytes
// (close-on-exec). ErrorCode::unavailable when nothing has arrived (wait until the socket is
// readable and call again); ErrorCode::io for anything else.
common::Result<Received> receive_with_descriptor(int socket, std::span<std::uint8_t> buffer);

}  // namespace jitcache::daemon::server
