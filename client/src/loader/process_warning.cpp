#include <client/src/loader/process_warning.hpp>

#include <atomic>
#include <string>

#include <client/src/loader/stderr_line.hpp>

namespace jitcache::client::loader {

bool warn_once(std::string_view text, bool quiet) {
  static std::atomic<bool> warned{false};
  if (quiet || warned.exchange(true)) return false;
  std::string line = "jitcache: " + std::string(text) +
                     "; loading without the cache (this warning is shown once; JITCACHE_QUIET=1 silences it)\n";
  // Only to the program's own stderr, never with a signal (stderr_line.hpp).
  write_stderr_line(line);
  return true;
}

}  // namespace jitcache::client::loader
