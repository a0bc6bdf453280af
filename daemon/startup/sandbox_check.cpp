#include <daemon/startup/sandbox_check.hpp>

#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <daemon/config/listen_address.hpp>

namespace jitcache::daemon::startup {

namespace {

// 0 when a stream socket of `family` can be made here, else socket(2)'s errno.
int socket_error(int family) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

const char* family_name(int family) { return family == AF_INET6 ? "AF_INET6" : "AF_INET"; }

std::string refusal_text(const std::string& setting, int family, int error) {
  return setting + " needs " + family_name(family) +
         " sockets, which this sandbox forbids (socket: " + std::strerror(error) +
         "): the service's RestrictAddressFamilies= (AF_UNIX alone in the shipped jitcached.service) "
         "must allow it, and PrivateNetwork= must be off for the port or the remote to be reachable; "
         "install the network drop-in: cp /usr/share/doc/jitcache/examples/jitcached-network.conf "
         "/etc/systemd/system/jitcached.service.d/network.conf, then systemctl daemon-reload and "
         "systemctl restart jitcached.socket jitcached.service (docs/operations.md \"A fleet\")";
}

bool tcp_metrics(const config::Config& config, int* family) {
  if (config.metrics_listen.empty()) return false;
  auto address = config::parse_listen_address(config.metrics_listen);
  if (!address || address->is_unix()) return false;
  *family = address->host.find(':') != std::string::npos ? AF_INET6 : AF_INET;
  return true;
}

bool loopback_only() {
  struct if_nameindex* names = ::if_nameindex();
  if (names == nullptr) return false;
  bool only_lo = true;
  for (const struct if_nameindex* n = names; n->if_index != 0 || n->if_name != nullptr; ++n) {
    if (std::strcmp(n->if_name, "lo") != 0) only_lo = false;
  }
  ::if_freenameindex(names);
  return only_lo;
}

}  // namespace

std::optional<std::string> network_refusal(const config::Config& config) {
  if (int family = AF_INET; tcp_metrics(config, &family)) {
    if (const int error = socket_error(family); error != 0) {
      return refusal_text("metrics_listen \"" + config.metrics_listen + "\"", family, error);
    }
  }
  if (!config.remote.empty()) {
    // A remote's host may resolve to either family: refused only when neither can be made.
    const int v4 = socket_error(AF_INET);
    if (v4 != 0 && socket_error(AF_INET6) != 0) return refusal_text("remote", AF_INET, v4);
  }
  return std::nullopt;
}

void close_waiting_connections(int listening_fd) {
  // poll() first: the socket is systemd's, shared with it, and may be blocking; its flags stay as
  // they are. Bounded, so that clients arriving as fast as they are closed cannot keep it here.
  for (int taken = 0; taken < 4096; ++taken) {
    pollfd ready{listening_fd, POLLIN, 0};
    if (::poll(&ready, 1, 0) != 1 || (ready.revents & POLLIN) == 0) return;
    const int connection = ::accept4(listening_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0 && errno != EINTR) return;
    if (connection >= 0) ::close(connection);
  }
}

std::optional<std::string> private_network_warning(const config::Config& config) {
  int family = AF_INET;
  const bool metrics = tcp_metrics(config, &family);
  if ((!metrics && config.remote.empty()) || std::getenv("INVOCATION_ID") == nullptr || !loopback_only()) {
    return std::nullopt;
  }
  return std::string(metrics ? "metrics_listen \"" + config.metrics_listen + "\"" : "remote") +
         ": this service has loopback as its only network interface, as under PrivateNetwork=yes (the "
         "shipped jitcached.service): a port here is not the host's, and no remote is reachable; install "
         "the network drop-in (docs/operations.md \"A fleet\")";
}

}  // namespace jitcache::daemon::startup
