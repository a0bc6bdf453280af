// The worker's side of its two pipes: read the whole job from stdin, write the whole reply to stdout.
// Shared with the tests' fault worker so that it speaks the protocol exactly as the real one does.
// Thread safety: one caller per fd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace jitcache::daemon::compile_worker {

// Everything up to EOF; nullopt on a read error or when more than max_bytes arrive.
std::optional<std::vector<std::uint8_t>> read_all(int fd, std::size_t max_bytes);

// Writes every byte, retrying short writes and EINTR; false on any error (e.g. EPIPE).
bool write_all(int fd, std::span<const std::uint8_t> bytes);

// Closes every descriptor above stderr. Rationale: the worker must hold nothing of the daemon's
// (the store, sockets) even if the daemon forgot a CLOEXEC flag.
void close_inherited_descriptors();

}  // namespace jitcache::daemon::compile_worker
