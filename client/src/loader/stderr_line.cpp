#include <client/src/loader/stderr_line.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include <client/src/loader/quiet_write.hpp>

namespace jitcache::client::loader {

namespace {

// Trivially destructible and constant-initialised: usable from any thread at any time, exit included.
struct StderrIdentity {
  std::atomic<bool> known{false};
  std::atomic<dev_t> device{0};
  std::atomic<ino_t> inode{0};
};
constinit StderrIdentity g_stderr;

__attribute__((constructor)) void record_at_load() { record_program_stderr(); }

// Whether fd 2 is still the stream the program had when the library was loaded.
bool still_program_stderr(struct stat& st) {
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  if (!g_stderr.known.load(std::memory_order_acquire)) return true;
  return st.st_dev == g_stderr.device.load(std::memory_order_relaxed) &&
         st.st_ino == g_stderr.inode.load(std::memory_order_relaxed);
}

}  // namespace

void record_program_stderr() {
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) {
    // Closed at load: nothing of the program's to write to, whatever fd 2 becomes later.
    g_stderr.device.store(0, std::memory_order_relaxed);
    g_stderr.inode.store(0, std::memory_order_relaxed);
  } else {
    g_stderr.device.store(st.st_dev, std::memory_order_relaxed);
    g_stderr.inode.store(st.st_ino, std::memory_order_relaxed);
  }
  g_stderr.known.store(true, std::memory_order_release);
}

void adopt_program_stderr(bool open, unsigned long long device, unsigned long long inode) {
  g_stderr.device.store(open ? static_cast<dev_t>(device) : 0, std::memory_order_relaxed);
  g_stderr.inode.store(open ? static_cast<ino_t>(inode) : 0, std::memory_order_relaxed);
  g_stderr.known.store(true, std::memory_order_release);
}

bool write_stderr_line(std::string_view line) {
  struct stat st {};
  if (!still_program_stderr(st)) return false;
  if (g_stderr.known.load() && g_stderr.inode.load() == 0 && g_stderr.device.load() == 0) return false;
  // One call for the whole line (a short line is written whole by one write(2)): not interleaved
  // with the program's own output.
  return write_all_without_sigpipe(STDERR_FILENO, line);
}

}  // namespace jitcache::client::loader
