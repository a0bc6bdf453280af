#include <client/src/loader/report_destination.hpp>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>

#include <client/src/loader/quiet_write.hpp>

namespace jitcache::client::loader {

namespace {

bool writable_in_place(mode_t mode) { return S_ISCHR(mode) || S_ISFIFO(mode); }

// Rationale: a FIFO or device someone else made (another user's FIFO under the documented
// /tmp/jitcache-%p.json, a link to a device planted in /tmp) would hand them the report, or make
// root write into a device they chose. Root's nodes (/dev/null, /dev/full) and the caller's own
// (its pipes, its terminal) are written; any other owner is refused.
bool owned_by_caller_or_root(uid_t owner) { return owner == 0 || owner == ::geteuid(); }

// Rationale: a reader that holds a FIFO or pipe open and never reads would otherwise hold the
// program's exit for ever once the report outgrows the pipe's buffer.
constexpr int k_in_place_wait_ms = 2000;

// Opens an existing non-regular file (or a link to one) for writing without O_CREAT or O_TRUNC.
// O_NONBLOCK makes a FIFO nobody reads ENXIO instead of a wait, and stays set: a full pipe is
// waited for at most k_in_place_wait_ms.
int write_in_place(const std::string& path, std::string_view text, bool append_to_regular) {
  const int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK | (append_to_regular ? O_APPEND : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return errno;
  struct stat st {};
  int error = 0;
  if (::fstat(fd, &st) != 0) {
    error = errno;
  } else if (append_to_regular ? !S_ISREG(st.st_mode) : !writable_in_place(st.st_mode)) {
    error = EAGAIN;  // replaced since it was looked at; the caller does not retry
  } else if (!owned_by_caller_or_root(st.st_uid)) {
    error = EPERM;
  } else if (!write_all_without_sigpipe(fd, text, append_to_regular ? -1 : k_in_place_wait_ms)) {
    error = errno != 0 ? errno : EIO;
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

// Writes `text` to `path` through a temporary file beside it, renamed over `path` when whole.
// Rationale: the directory may be shared (/tmp) with other users, who can guess a pid. O_EXCL with a
// name they cannot predict means the file written is always one this process just created: never
// a file or a hard link someone planted under the name, which O_TRUNC would otherwise overwrite.
int write_replacing(const std::string& path, std::string_view text) {
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    std::uint64_t nonce = 0;
    if (::getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce)) {
      nonce = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
    temporary = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(nonce);
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) return errno;
  }
  if (fd < 0) return EEXIST;
  int error = write_all_without_sigpipe(fd, text) ? 0 : (errno != 0 ? errno : EIO);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) ::unlink(temporary.c_str());
  return error;
}

}  // namespace

int write_report_destination(const std::string& path, std::string_view text) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    if (errno == ENOENT) return write_replacing(path, text);
    return errno;
  }
  if (S_ISREG(link.st_mode)) return write_replacing(path, text);
  if (S_ISDIR(link.st_mode)) return EISDIR;
  if (writable_in_place(link.st_mode)) return write_in_place(path, text, false);
  if (!S_ISLNK(link.st_mode)) return S_ISSOCK(link.st_mode) ? ENXIO : EPERM;
  struct stat target {};
  // A dangling link (/dev/stdout with stdout closed) is an error: the report never replaces a link.
  if (::stat(path.c_str(), &target) != 0) return errno;
  if (writable_in_place(target.st_mode)) {
    if (!owned_by_caller_or_root(link.st_uid)) return EPERM;
    return write_in_place(path, text, false);
  }
  if (!S_ISREG(target.st_mode)) return S_ISDIR(target.st_mode) ? EISDIR : EPERM;
  if (link.st_uid != 0 && link.st_uid != ::geteuid()) return EPERM;
  return write_in_place(path, text, true);
}

}  // namespace jitcache::client::loader
