#include <daemon/server/listening_socket.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jitcache::daemon::server {

using proto::ErrorCode;
using proto::make_error;

namespace {
proto::Error errno_error(const std::string& what) {
  return make_error(errno == ENOSPC ? ErrorCode::no_space : ErrorCode::io, what + ": " + std::strerror(errno));
}
}  // namespace

proto::Result<void> make_directories(const std::string& path, unsigned mode) {
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

proto::Result<ListeningSocket> open_listening_socket(const std::string& socket_path) {
  sockaddr_un addr{};
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return make_error(ErrorCode::invalid_argument, "socket path " + socket_path + " is longer than " +
                                                       std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  }
  const std::string directory = socket_path.substr(0, socket_path.rfind('/'));
  if (!directory.empty()) {
    if (auto made = make_directories(directory, 0755); !made) return made.error();
  }
  auto lock = InstanceLock::acquire(socket_path + ".lock", "socket " + socket_path);
  if (!lock) return lock.error();

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
  return ListeningSocket{fd, std::move(*lock)};
}

}  // namespace jitcache::daemon::server
