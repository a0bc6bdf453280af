#include <common/memory_backed_file.hpp>

#include <linux/magic.h>
#include <sys/vfs.h>

namespace jitcache::common {

std::optional<std::string> memory_backed_file_system(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return std::nullopt;
  // A memfd lives on the kernel's internal tmpfs (or hugetlbfs with MFD_HUGETLB): the same magic.
  switch (static_cast<unsigned long>(fs.f_type)) {
    case TMPFS_MAGIC: return "tmpfs or a memfd";
    case RAMFS_MAGIC: return "ramfs";
    case HUGETLBFS_MAGIC: return "hugetlbfs";
    // Its upper layer may be any of those, and fstatfs names only the overlay: any user can mount
    // an overlay on a tmpfs in a user namespace of its own (Linux 5.11+), so one is taken as memory
    // (tests/integration/test_daemon_bundle_overlay_export.cpp).
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs, whose upper layer may be tmpfs";
    default: return std::nullopt;
  }
}

}  // namespace jitcache::common
