#include <daemon/unix_socket/listening_socket.hpp>

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <common/result.hpp>
#include <cstdio>
#include <cstring>
#include <vector>

namespace jitcache::daemon::unix_socket {

using common::ErrorCode;
using common::make_error;

namespace {
common::Error errno_error(const std::string& what) {
  return make_error(errno == ENOSPC ? ErrorCode::no_space : ErrorCode::io, what + ": " + std::strerror(errno));
}
}  // namespace

common::Result<void> make_directories(const std::string& path, unsigned mode) {
  if (path.empty()) return make_error(ErrorCode::invalid_argument, "empty directory path");
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) return errno_error("cannot create " + prefix);
    if (slash == std::string::npos) break;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return make_error(ErrorCode::io, path + " exists and is not a directory");
  }
  return {};
}

common::Result<void> check_socket_directory(const std::string& directory) {
  struct stat st {};
  if (::lstat(directory.c_str(), &st) != 0) return errno_error("cannot inspect the socket directory " + directory);
  const std::string advice =
      "; put the socket in a directory only jitcached's user can write (the default, "
      "$XDG_RUNTIME_DIR/jitcache or /run/jitcache, is made that way), since whoever can write there can replace "
      "the socket and serve code to every client";
  if (!S_ISDIR(st.st_mode)) {
    return make_error(ErrorCode::invalid_argument,
                      "insecure socket directory " + directory + ": not a directory (a link?)" + advice);
  }
  if (st.st_uid != ::geteuid()) {
    return make_error(ErrorCode::invalid_argument, "insecure socket directory " + directory + ": owned by uid " +
                                                       std::to_string(st.st_uid) + ", not by jitcached's uid " +
                                                       std::to_string(::geteuid()) + advice);
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return make_error(ErrorCode::invalid_argument, "insecure socket directory " + directory + ": writable by " +
                                                       ((st.st_mode & S_IWOTH) ? "everyone" : "its group") + " (mode " +
                                                       mode + ")" + advice);
  }
  return {};
}

common::Result<ListeningSocket> open_listening_socket(const std::string& socket_path, std::optional<gid_t> group) {
  sockaddr_un addr{};
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return make_error(ErrorCode::invalid_argument, "socket path " + socket_path + " is longer than " +
                                                       std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  }
  const std::string directory = socket_path.substr(0, socket_path.rfind('/'));
  if (!directory.empty()) {
    JITCACHE_TRY(make_directories(directory, 0750));
    JITCACHE_TRY(check_socket_directory(directory));
    // The group must be able to reach the socket: it traverses the directory.
    if (group && ::chown(directory.c_str(), static_cast<uid_t>(-1), *group) != 0) {
      return errno_error("cannot give the socket directory " + directory + " to group " + std::to_string(*group));
    }
  }
  auto lock = InstanceLock::acquire(socket_path + ".lock", "socket " + socket_path);
  JITCACHE_TRY(lock);

  struct stat st {};
  if (::lstat(socket_path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return make_error(ErrorCode::invalid_argument, socket_path + " exists and is not a socket; not replacing it");
    }
    ::unlink(socket_path.c_str());  // left by a daemon that died: we hold the lock, so it is not live
  }

  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno_error("socket");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  // Rationale: bind under a umask that already yields 0660, so the socket is never reachable with
  // wider permissions, not even between bind() and chmod().
  const mode_t old_umask = ::umask(0117);
  const int bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::umask(old_umask);
  if (bound != 0 || ::listen(fd, k_listen_backlog) != 0) {
    auto error = errno_error("cannot listen on " + socket_path);
    ::close(fd);
    return error;
  }
  if (group && ::chown(socket_path.c_str(), static_cast<uid_t>(-1), *group) != 0) {
    auto error = errno_error("cannot give the socket " + socket_path + " to group " + std::to_string(*group));
    ::close(fd);
    return error;
  }
  return ListeningSocket{fd, std::move(*lock)};
}

}  // namespace jitcache::daemon::unix_socket
