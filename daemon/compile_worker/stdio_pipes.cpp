#include <daemon/compile_worker/stdio_pipes.hpp>

#include <unistd.h>

#include <cerrno>

namespace jitcache::daemon::compile_worker {

std::optional<std::vector<std::uint8_t>> read_all(int fd, std::size_t max_bytes) {
  std::vector<std::uint8_t> bytes;
  std::size_t used = 0;
  for (;;) {
    if (bytes.size() - used < 65536) bytes.resize(used + (std::size_t{1} << 20));
    const ssize_t n = ::read(fd, bytes.data() + used, bytes.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
    if (used > max_bytes) return std::nullopt;
  }
  bytes.resize(used);
  return bytes;
}

bool write_all(int fd, std::span<const std::uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
  return true;
}

void close_inherited_descriptors() { ::close_range(3, ~0U, 0); }

}  // namespace jitcache::daemon::compile_worker
