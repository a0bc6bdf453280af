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
    default: return std::nullopt;
  }
}

}  // namespace jitcache::common
