// A size-limited tmpfs mounted on a directory for the life of the object, so that a fault test can
// fill a file system of its own (needs CAP_SYS_ADMIN: root in CI and in the dev sandbox). Where
// mounting is not permitted the object says why and the test skips visibly. Unmounted (lazily if
// still busy) when it dies: declare it after the TempDir that holds the directory and before the
// DaemonProcess that uses it, so the daemon is gone first and the directory last. Thread safety:
// one owner.
#pragma once

#include <cstdint>
#include <string>

namespace jitcache::testing {

class TmpfsMount {
 public:
  // `size` as mount(8) takes it, e.g. "8m". Creates `directory` if missing.
  TmpfsMount(std::string directory, const std::string& size);
  ~TmpfsMount();
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  bool mounted() const { return m_mounted; }
  const std::string& error() const { return m_error; }  // why not mounted
  std::uint64_t free_bytes() const;                     // statvfs: bytes an unprivileged writer may still use

 private:
  std::string m_directory;
  std::string m_error;
  bool m_mounted = false;
};

}  // namespace jitcache::testing
