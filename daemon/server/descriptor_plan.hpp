// How the daemon spends its file descriptors (docs/operations.md "File descriptors"): what its own
// files need, then a share for connections and a share for the memfds of images served by
// descriptor, so that neither can take the descriptors the other, or accept, needs.
// Thread safety: plain value and a pure function.
#pragma once

#include <cstddef>
#include <cstdint>

namespace jitcache::daemon::server {

struct DescriptorPlan {
  std::uint64_t limit = 0;                     // RLIMIT_NOFILE (soft) the daemon runs under; 0: not planned
  std::uint64_t reserved = 0;                  // for the daemon's own files: store, log, io_contexts, compile pipes
  unsigned max_connections = 0;                // max_connections, lowered to fit the limit when it must be
  std::size_t cached_image_descriptors = 256;  // memfds ImageDescriptors may keep
};

// What one connection may hold open: its socket, and a descriptor the client sent that no request
// has taken yet (header flag request_fd, PROTOCOL.md §2: the connection keeps the newest one until a
// request takes it or the connection ends, connection.cpp).
inline constexpr unsigned k_descriptors_per_connection = 2;

// Rationale: of what is left after `reserved`, half may go to connections (k_descriptors_per_connection
// each) and a quarter to cached memfds; the last quarter stays free for what comes and goes (a memfd made for one reply
// and not kept, a compile worker's pipes, metrics connections, SQLite's temporary files), so a connection at
// max_connections still finds a descriptor for accept. At least one connection is planned.
DescriptorPlan plan_descriptors(std::uint64_t limit, std::uint64_t reserved, unsigned max_connections);

}  // namespace jitcache::daemon::server
