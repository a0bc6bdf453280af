#include <daemon/stats/store_space.hpp>

#include <sys/statvfs.h>

namespace jitcache::daemon::stats {

StoreSpace store_space(const std::string& directory) {
  struct statvfs st {};
  if (directory.empty() || ::statvfs(directory.c_str(), &st) != 0) return {};
  const auto unit = static_cast<std::uint64_t>(st.f_frsize != 0 ? st.f_frsize : st.f_bsize);
  return StoreSpace{static_cast<std::uint64_t>(st.f_bavail) * unit, static_cast<std::uint64_t>(st.f_blocks) * unit};
}

}  // namespace jitcache::daemon::stats
