// jitcached's side of systemd's service protocol (libsystemd): a listening socket passed by socket
// activation, READY=1 once the store is open and checked, WATCHDOG=1 while the event loop and the
// workers respond, STOPPING=1 when a drain begins. Outside systemd (no NOTIFY_SOCKET, no LISTEN_FDS)
// every call does nothing, so the daemon runs the same everywhere.
//
// Thread safety: take_listening_socket() once at start-up; the notifications from any thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <common/result.hpp>

namespace jitcache::daemon::startup {

struct InheritedSocket {
  int fd = -1;
  std::string path;  // where it is bound (getsockname), e.g. /run/jitcache/jitcached.sock
};

class ServiceManager {
 public:
  // The one listening socket systemd passed (LISTEN_FDS=1 for this pid), or none when none was
  // passed. More than one, or one that is not a listening Unix stream socket, is an error: the
  // unit is wrong and serving on the wrong thing would be worse than not starting.
  static common::Result<std::optional<InheritedSocket>> take_listening_socket();

  // Ready to serve: the store is open and checked and the socket listens.
  static void ready(std::string_view status);
  static void stopping(std::string_view status);
  static void watchdog();
  // The interval systemd expects pings at (WatchdogSec=), when the watchdog is on for this process.
  static std::optional<std::chrono::microseconds> watchdog_interval();
};

}  // namespace jitcache::daemon::startup
