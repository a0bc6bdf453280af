#include <client/src/loader/process_warning.hpp>

#include <unistd.h>

#include <atomic>
#include <string>

namespace jitcache::client::loader {

bool warn_once(std::string_view text, bool quiet) {
  static std::atomic<bool> warned{false};
  if (quiet || warned.exchange(true)) return false;
  std::string line = "jitcache: " + std::string(text) +
                     "; loading without the cache (this warning is shown once; JITCACHE_QUIET=1 silences it)\n";
  // One write(2) so the line is not interleaved with the program's own stderr output.
  [[maybe_unused]] ssize_t written = ::write(STDERR_FILENO, line.data(), line.size());
  return true;
}

}  // namespace jitcache::client::loader
