#include <tests/fakes/fake_cuda/caller_memory.hpp>

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace jitcache::fakes::fake_cuda {
namespace {

std::atomic<bool> g_vm_readv_unavailable{false};

// Rationale: reading a string one page at a time never asks for memory past the page that holds its
// NUL, so a string that ends just before an unmapped page is read whole.
constexpr std::size_t k_page = 4096;

// The fallback: write() into a pipe copies from our address space in the kernel too, and answers
// EFAULT for an unreadable page just as process_vm_readv does.
bool copy_through_pipe(const void* source, std::size_t size, void* out) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  bool ok = true;
  std::size_t done = 0;
  while (ok && done < size) {
    const std::size_t chunk = std::min(size - done, k_page);  // an empty pipe takes a page without blocking
    const ssize_t written = write(fds[1], static_cast<const std::byte*>(source) + done, chunk);
    ok = written > 0 && read(fds[0], static_cast<std::byte*>(out) + done, static_cast<std::size_t>(written)) == written;
    if (ok) done += static_cast<std::size_t>(written);
  }
  close(fds[0]);
  close(fds[1]);
  return ok;
}

}  // namespace

bool copy_from_caller(const void* source, std::size_t size, void* out) {
  if (size == 0) return true;
  if (source == nullptr) return false;
  if (!g_vm_readv_unavailable.load(std::memory_order_relaxed)) {
    std::size_t done = 0;
    while (done < size) {
      iovec local{static_cast<std::byte*>(out) + done, size - done};
      iovec remote{const_cast<std::byte*>(static_cast<const std::byte*>(source) + done), size - done};
      const ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
        g_vm_readv_unavailable.store(true, std::memory_order_relaxed);
        break;
      }
      return false;  // EFAULT: a page in the range is not readable
    }
    if (done == size) return true;
  }
  return copy_through_pipe(source, size, out);
}

std::optional<std::vector<std::byte>> caller_bytes(const void* source, std::size_t size) {
  std::vector<std::byte> bytes(size);
  if (!copy_from_caller(source, size, bytes.data())) return std::nullopt;
  return bytes;
}

std::optional<std::string> caller_string(const void* source, std::size_t max_length) {
  if (source == nullptr) return std::nullopt;
  std::string text;
  const auto* cursor = static_cast<const char*>(source);
  char chunk[k_page];
  while (text.size() <= max_length) {
    const auto address = reinterpret_cast<std::uintptr_t>(cursor);
    const std::size_t to_page_end = k_page - address % k_page;
    if (!copy_from_caller(cursor, to_page_end, chunk)) return std::nullopt;
    const char* nul = static_cast<const char*>(std::memchr(chunk, '\0', to_page_end));
    const std::size_t length = nul != nullptr ? static_cast<std::size_t>(nul - chunk) : to_page_end;
    text.append(chunk, length);
    if (nul != nullptr) break;
    cursor += to_page_end;
  }
  if (text.size() > max_length) return std::nullopt;
  return text;
}

}  // namespace jitcache::fakes::fake_cuda
