#include <daemon/publish/published_dir.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace jitcache::daemon::publish {

using common::ErrorCode;
using common::make_error;

namespace {

// Rationale: not setgid, though that would give every file the directory's group without a chown:
// the shipped unit's RestrictSUIDSGID= refuses a setgid bit on directories too (EPERM).
constexpr mode_t k_dir_mode = 0750;

common::Error errno_error(const std::string& what, int error) {
  return make_error(error == ENOSPC ? ErrorCode::no_space : ErrorCode::io, what + ": " + std::strerror(error));
}

}  // namespace

common::Result<common::UniqueFd> prepare_published_dir(const std::string& dir, const std::string& socket_path) {
  struct stat socket_st {};
  if (::stat(socket_path.c_str(), &socket_st) != 0) return errno_error("cannot stat the socket " + socket_path, errno);

  // remove_all never follows a link: a link planted at the path goes, not what it points to.
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec)
    return make_error(ErrorCode::io,
                      "cannot remove the published directory of an earlier run " + dir + ": " + ec.message());
  // Rationale: made under a umask that yields 0700 at first, so the directory is never readable
  // by the socket's group before its group and mode are set.
  const mode_t old_umask = ::umask(0077);
  const int made = ::mkdir(dir.c_str(), 0700);
  const int mkdir_errno = errno;
  ::umask(old_umask);
  if (made != 0) return errno_error("cannot create the published directory " + dir, mkdir_errno);

  common::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return errno_error("cannot open the published directory " + dir, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error("cannot stat the published directory " + dir, errno);
  if (st.st_uid != ::geteuid()) {
    return make_error(ErrorCode::io, "the published directory " + dir + " is not owned by the daemon's uid");
  }
  // Rationale: a chown only when the group differs. Made by the daemon, the directory has its
  // primary group, which is the socket's under the shipped unit (Group= and SocketGroup= are both
  // jitcache), where chown is not allowed at all (SystemCallFilter=~@privileged includes @chown).
  // A sidecar whose socket group is a supplementary one needs this chown.
  if (st.st_gid != socket_st.st_gid && ::fchown(fd.get(), static_cast<uid_t>(-1), socket_st.st_gid) != 0) {
    return errno_error("cannot give the published directory " + dir + " the socket's group", errno);
  }
  if (::fchmod(fd.get(), k_dir_mode) != 0) return errno_error("cannot set the mode of " + dir, errno);
  return fd;
}

}  // namespace jitcache::daemon::publish
