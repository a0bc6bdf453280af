// One sendmsg that carries bytes and, with them, one file descriptor (SCM_RIGHTS) on their first
// byte: how the daemon hands out an image as a sealed memfd and how the CLI hands the daemon a
// bundle file (proto/PROTOCOL.md §4 "Images by descriptor", "request_fd"). Each side keeps its own
// policy for a full socket and for the rest of the bytes.
// Thread safety: a free function over the caller's socket.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>

namespace jitcache::common {

// ::sendmsg(socket, bytes + fd, MSG_NOSIGNAL | extra_flags): the bytes sent, or -1 with errno set.
ssize_t send_bytes_with_descriptor(int socket, std::span<const std::uint8_t> bytes, int fd, int extra_flags);

}  // namespace jitcache::common
