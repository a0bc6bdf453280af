#include <tests/support/tmpfs_mount.hpp>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace jitcache::testing {

TmpfsMount::TmpfsMount(std::string directory, const std::string& size) : m_directory(std::move(directory)) {
  if (::mkdir(m_directory.c_str(), 0700) != 0 && errno != EEXIST) {
    m_error = "cannot create " + m_directory + ": " + std::strerror(errno);
    return;
  }
  const std::string options = "size=" + size + ",mode=0700";
  if (::mount("tmpfs", m_directory.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    m_error = "cannot mount a tmpfs on " + m_directory + " (" + std::strerror(errno) +
              "; it needs CAP_SYS_ADMIN, e.g. root outside a restricted container)";
    return;
  }
  m_mounted = true;
}

TmpfsMount::~TmpfsMount() {
  if (!m_mounted) return;
  if (::umount2(m_directory.c_str(), 0) != 0) ::umount2(m_directory.c_str(), MNT_DETACH);
}

std::uint64_t TmpfsMount::free_bytes() const {
  struct statvfs st {};
  if (::statvfs(m_directory.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

}  // namespace jitcache::testing
