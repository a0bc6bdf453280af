#include <daemon/store/database_files.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace jitcache::daemon::store {

DatabaseFiles DatabaseFiles::snapshot(const std::filesystem::path& database) {
  DatabaseFiles files;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::path path(database.string() + suffix);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;
    files.m_files.push_back(Watched{std::move(path), st.st_dev, st.st_ino});
  }
  return files;
}

std::optional<std::string> DatabaseFiles::changed() const {
  for (const auto& file : m_files) {
    struct stat st {};
    if (::stat(file.path.c_str(), &st) != 0) {
      if (errno == ENOENT) return file.path.string() + " was deleted";
      // EACCES and the like: cannot tell, and a store that can no longer reach its directory fails
      // its own calls soon enough; no reason to throw it away.
      continue;
    }
    if (st.st_dev != file.device || st.st_ino != file.inode) {
      return file.path.string() + " was replaced by another file";
    }
  }
  return std::nullopt;
}

}  // namespace jitcache::daemon::store
