#include <daemon/startup/mapped_store_fault.hpp>

#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace jitcache::daemon::startup {

namespace {

int g_explanation_fd = 2;

constexpr char k_explanation[] =
    "jitcached: SIGBUS: a memory-mapped read failed, most likely of the store database (an I/O error on "
    "its disk, or the file truncated underneath the daemon). The daemon ends here; restarted, it checks the "
    "store and sets a damaged one aside. Setting store_mmap_size = 0 makes such a read fail one request "
    "instead (docs/operations.md).\n";

void on_sigbus(int) {
  // Only async-signal-safe calls. SA_RESETHAND has restored the default action: returning re-runs
  // the faulting access, which now ends the process the ordinary way (core dump, status SIGBUS).
  const ssize_t ignored = ::write(g_explanation_fd, k_explanation, sizeof(k_explanation) - 1);
  (void)ignored;
}

}  // namespace

void explain_mapped_store_faults(int fd) {
  g_explanation_fd = fd;
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = on_sigbus;
  action.sa_flags = SA_RESETHAND;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, nullptr);
}

}  // namespace jitcache::daemon::startup
