// A TCP listener on a free port of 127.0.0.1 that is no Redis (or HTTP) server, for fault tests: it
// accepts every connection and then answers with bytes that are not the protocol, or never answers,
// or closes at once, or answers with bytes the test wrote (a hostile reply: a huge bulk length, a
// truncated value; or a scripted fake Cluster node: a CLUSTER SLOTS reply naming itself, then
// TRYAGAIN). Connections stay open until the client closes them or the object dies. It listens on
// a free port, or on one the test names: the port of a server the test just killed, so that the
// clients configured for that server meet garbage mid-run.
// Thread safety: a thread of its own serves the connections; the methods may be called from any
// thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace jitcache::testing {

class GarbageServer {
 public:
  enum class Behaviour {
    non_resp,  // each read is answered with an HTTP error page (not RESP, not what a client asked)
    silent,    // reads and never answers: the client's deadline must end the call
    close,     // closes each connection as soon as it is accepted
    scripted,  // the n-th read of a connection is answered with script[n], the last one again after
  };

  // `script`: the replies of Behaviour::scripted, each sent whole (keep them small: the sending
  // blocks this server's thread for up to 2 s); "{port}" in them is replaced by port().
  // `port`: 0 for a free one; else that port of 127.0.0.1 (SO_REUSEADDR, so a port whose killed
  // server left connections in TIME_WAIT can be taken at once); throws when it cannot be bound.
  explicit GarbageServer(Behaviour behaviour, std::vector<std::string> script = {}, std::uint16_t port = 0);
  ~GarbageServer();
  GarbageServer(const GarbageServer&) = delete;
  GarbageServer& operator=(const GarbageServer&) = delete;

  std::uint16_t port() const { return m_port; }
  std::string address() const { return "127.0.0.1:" + std::to_string(m_port); }
  // Connections accepted so far.
  std::size_t connections() const { return m_connections.load(); }
  // Bytes received so far, over all connections.
  std::size_t bytes_received() const { return m_received.load(); }

 private:
  void serve();

  Behaviour m_behaviour;
  std::vector<std::string> m_script;
  int m_listener = -1;
  int m_wake[2] = {-1, -1};
  std::uint16_t m_port = 0;
  std::atomic<std::size_t> m_connections{0};
  std::atomic<std::size_t> m_received{0};
  std::thread m_thread;
};

}  // namespace jitcache::testing
