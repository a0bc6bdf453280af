#include <daemon/startup/service_manager.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include <cstring>

namespace jitcache::daemon::startup {

using common::ErrorCode;
using common::make_error;

common::Result<std::optional<InheritedSocket>> ServiceManager::take_listening_socket() {
  // Unsetting LISTEN_* keeps children (the compile workers) from believing the socket is theirs.
  const int count = ::sd_listen_fds(1);
  if (count < 0) return make_error(ErrorCode::io, std::string("sd_listen_fds: ") + std::strerror(-count));
  if (count == 0) return std::optional<InheritedSocket>{};
  if (count > 1) {
    return make_error(ErrorCode::invalid_argument, "systemd passed " + std::to_string(count) +
                                                       " sockets; jitcached listens on exactly one "
                                                       "(one ListenStream= in jitcached.socket)");
  }
  const int fd = SD_LISTEN_FDS_START;
  if (::sd_is_socket_unix(fd, SOCK_STREAM, 1, nullptr, 0) <= 0) {
    return make_error(ErrorCode::invalid_argument,
                      "the socket systemd passed is not a listening Unix stream socket (ListenStream= must be a path)");
  }
  sockaddr_un address{};
  socklen_t length = sizeof(address);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return make_error(ErrorCode::io, std::string("getsockname on the passed socket: ") + std::strerror(errno));
  }
  InheritedSocket inherited;
  inherited.fd = fd;
  // An abstract socket (leading NUL) has no path in the file system; keep what there is.
  inherited.path = address.sun_path[0] != '\0' ? std::string(address.sun_path) : std::string();
  return std::optional<InheritedSocket>{inherited};
}

void ServiceManager::ready(std::string_view status) {
  ::sd_notifyf(0, "READY=1\nSTATUS=%.*s", static_cast<int>(status.size()), status.data());
}

void ServiceManager::stopping(std::string_view status) {
  ::sd_notifyf(0, "STOPPING=1\nSTATUS=%.*s", static_cast<int>(status.size()), status.data());
}

void ServiceManager::watchdog() { ::sd_notify(0, "WATCHDOG=1"); }

std::optional<std::chrono::microseconds> ServiceManager::watchdog_interval() {
  std::uint64_t usec = 0;
  if (::sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec);
}

}  // namespace jitcache::daemon::startup
