// The files a store has open, by identity (device and inode), so that the daemon notices when its
// database, -wal or -shm is deleted or replaced under it (an operator who deletes jitcache.db and
// its -wal/-shm while jitcached runs would otherwise have every later PUT acknowledged into the
// unlinked files and lost at the next start). SQLite keeps writing to the files it has open, so
// only a look at the paths can tell.
//
// Rationale: compared by stat() of the path, not by the link count of the open file: the daemon
// never sees SQLite's descriptors, and a path that now names another file (a backup moved into
// place) is as lost to the daemon as a deleted one. Three stat() calls are a few microseconds, cheap
// next to the SQLite write they precede (recovering_database.hpp checks before every write).
//
// Thread safety: immutable after snapshot(); changed() may be called from any thread.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace jitcache::daemon::store {

class DatabaseFiles {
 public:
  // The identity of the database and of its -wal and -shm as they are now; a file that does not
  // exist is not watched.
  static DatabaseFiles snapshot(const std::filesystem::path& database);

  // nullopt while every watched file is still at its path; else what happened to the first one
  // that is not ("/var/lib/jitcache/jitcache.db was deleted", "... was replaced by another file").
  std::optional<std::string> changed() const;

 private:
  struct Watched {
    std::filesystem::path path;
    dev_t device = 0;
    ino_t inode = 0;
  };
  std::vector<Watched> m_files;
};

}  // namespace jitcache::daemon::store
