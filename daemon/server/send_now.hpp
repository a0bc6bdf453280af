// Sending a reply's parts with one non-blocking sendmsg, without Asio, from the thread that owns the
// connection. Thread safety: a free function on a socket the caller alone writes to.
//
// Rationale: a reply the socket takes whole (every 4 KB LOOKUP hit) is then written with no
// reactor operation, no posted completion and no turn of the event loop before the connection reads
// its next request; Asio's async_write of the same bytes did all three (docs/benchmarks.md "One
// turn per request").
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <span>

#include <common/result.hpp>

namespace jitcache::daemon::server {

// How many bytes of `parts` the socket took: all of them, part (the socket filled up: write the
// rest when it is writable), or 0 when it was full. ErrorCode::io when the peer is gone or the
// send failed otherwise (no SIGPIPE).
common::Result<std::size_t> send_now(int socket, std::span<const iovec> parts);

}  // namespace jitcache::daemon::server
