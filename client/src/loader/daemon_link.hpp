// libjitcache's connections to jitcached: a small pool shared by all threads, and the memory that
// the daemon is unavailable so that a dead or hung daemon costs one bounded wait, not one per load.
//
// A connection is leased to one load at a time. A failed call (refused, timed out, garbage) drops
// the connection and puts the daemon in back-off: loads during the back-off skip the daemon at
// once (daemon_back_off.hpp says for how long), and so do hit notes; a daemon that hit notes found
// stuck is skipped by loads too (pending_hit_notes.hpp).
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include <unistd.h>
#include <optional>
#include <utility>
#include <vector>

#include <client/src/loader/client_settings.hpp>
#include <client/src/transport/daemon_client.hpp>

namespace jitcache::client::loader {

class DaemonLink;

// A connection held by one load; returned to the pool when it goes out of scope, unless the load
// reported it broken (or the program closed its descriptor: transport/owned_socket.hpp). HELLO is sent only when
// something needs its answer (capabilities, a reply larger than the default limit): a hit then costs one round trip,
// not two.
class DaemonLease {
 public:
  DaemonLease(DaemonLink* link, transport::DaemonClient client, std::optional<std::uint64_t> capabilities);
  // A moved-from lease owns nothing (std::optional's own move would leave it engaged).
  DaemonLease(DaemonLease&& other) noexcept
      : m_link(std::exchange(other.m_link, nullptr)),
        m_client(std::move(other.m_client)),
        m_capabilities(other.m_capabilities) {
    other.m_client.reset();
  }
  DaemonLease& operator=(DaemonLease&& other) noexcept;
  DaemonLease(const DaemonLease&) = delete;
  ~DaemonLease();

  transport::DaemonClient& client() { return *m_client; }
  // The daemon's capability bits (HELLO on first use); errors as the HELLO call's.
  common::Result<std::uint64_t> capabilities();
  // The bits when this connection's HELLO has already answered; nullopt before.
  std::optional<std::uint64_t> known_capabilities() const { return m_capabilities; }
  // Closes this connection without judging the daemon (its state is unusable, the daemon is fine).
  void discard() { m_client.reset(); }
  // The daemon failed on this connection: drop it and back off (see DaemonLink::mark_unavailable).
  void broken(const common::Error& why);

 private:
  DaemonLink* m_link;
  std::optional<transport::DaemonClient> m_client;
  std::optional<std::uint64_t> m_capabilities;
};

class DaemonLink {
 public:
  explicit DaemonLink(ClientSettings settings) : m_settings(std::move(settings)) {}
  // Sends the hit notes still waiting for this socket (pending_hit_notes.hpp): a configuration
  // that replaces this link should not keep them until exit.
  ~DaemonLink();

  const ClientSettings& settings() const { return m_settings; }

  // A connection (HELLO done), or the reason the daemon cannot be used now (ErrorCode::unavailable
  // during a back-off, else the connect/HELLO error).
  common::Result<DaemonLease> acquire();
  // How this link connects (socket, timeouts), for connections of other kinds (hit notes).
  transport::ConnectOptions connect_options() const;

  // Starts a back-off: timeouts and unreadable replies get the long one, refusals the short one.
  void mark_unavailable(const common::Error& why);

 private:
  friend class DaemonLease;
  friend class ClientRuntime;  // holds m_mutex across fork() (client_runtime.cpp)
  void give_back(transport::DaemonClient client, std::optional<std::uint64_t> capabilities);

  ClientSettings m_settings;
  std::mutex m_mutex;
  struct Idle {
    transport::DaemonClient client;
    std::optional<std::uint64_t> capabilities;
  };
  std::vector<Idle> m_idle;
  // The process the idle connections belong to. A child of fork() inherits the descriptors, and a
  // connection used by two processes at once mixes their requests: the child drops them (closing
  // its copies only) and connects afresh.
  pid_t m_pid = ::getpid();
  std::chrono::steady_clock::time_point m_retry_after{};
  std::string m_unavailable_reason;
};

}  // namespace jitcache::client::loader
