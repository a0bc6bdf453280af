// Sending bytes with a file descriptor attached (SCM_RIGHTS), which Asio has no call for.
// Thread safety: a free function on a socket the caller alone writes to.
#pragma once

#include <cstddef>

#include <common/result.hpp>
#include <proto/digest.hpp>

namespace jitcache::daemon::server {

// One non-blocking sendmsg of `bytes` with `fd` attached to the first byte. Returns how many bytes
// the socket took (at least 1: the descriptor has gone with them); ErrorCode::unavailable when the
// socket is full (wait until it is writable and call again); ErrorCode::io for anything else.
common::Result<std::size_t> send_with_descriptor(int socket, proto::Bytes bytes, int fd);

}  // namespace jitcache::daemon::server
