// The metrics endpoint: a small HTTP/1.1 server (Boost.Beast) on a thread and io_context of its
// own, answering GET /metrics with the Prometheus text format (content type
// text/plain; version=0.0.4) and 404 to any other path. One request per connection. It listens on
// a loopback TCP port or on a Unix socket (config/listen_address.hpp), the latter made as the main
// socket is (daemon/unix_socket/listening_socket.hpp: mode 0660, the given group, a directory only the
// daemon's user can write, an instance lock).
//
// Limits: a request (line and headers) of at most k_max_request_bytes and no body; the whole
// request within k_request_deadline of the connection's accept and the reply taken within
// k_write_deadline; at most k_max_connections at once. A connection beyond that closes the oldest
// one still waiting for its request (or being lingered on), never one whose reply is being
// written; only when every connection is writing is the new one closed at once.
// Rationale: silent or trickling connections are what a local user can open for free; with the
// oldest waiting one dropped for each new one, and each dropped by itself after
// k_request_deadline anyway, they cannot keep a real scrape out, which sends its request as soon
// as it connects.
// Nothing here touches the client socket's accept or worker threads: a scrape renders on this
// thread, from atomics and the store's thread-safe reads (store_figures.hpp bounds those), so a
// slow or hostile scraper costs this thread, never a LOOKUP.
// Thread safety: open(), start() and stop() from one thread (the main thread); the rest runs on
// the metrics thread.
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>

#include <common/result.hpp>
#include <daemon/config/listen_address.hpp>
#include <daemon/unix_socket/listening_socket.hpp>

namespace jitcache::daemon::metrics {

inline constexpr std::size_t k_max_request_bytes = 8 << 10;
// Rationale: a scraper writes its request right after connecting (a few hundred bytes, one
// segment on loopback or a local socket); two seconds is far more than that takes on a loaded
// host, and short enough that a connection which sends nothing gives its slot back soon.
inline constexpr auto k_request_deadline = std::chrono::seconds(2);
inline constexpr auto k_write_deadline = std::chrono::seconds(10);
// Rationale: one scrape at a time per scraper, and a host has a few (a Prometheus pair, an agent, a
// person with curl); 16 leaves room for those while bounding the descriptors and memory that
// connections waiting for their request may hold.
inline constexpr unsigned k_max_connections = 16;
// How long stop() lets scrapes in flight finish.
inline constexpr auto k_stop_grace = std::chrono::seconds(1);

class MetricsServer {
 public:
  using Render = std::function<std::string()>;

  // Binds and listens now, so a port in use or an unusable socket path is a start-up error; serves
  // only after start(). `unix_group`: the group of a Unix socket (none: the daemon's own); unused
  // for TCP.
  static common::Result<std::unique_ptr<MetricsServer>> open(const config::ListenAddress& address, Render render,
                                                             std::optional<gid_t> unix_group = {});
  ~MetricsServer();  // stop()
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  std::uint16_t port() const { return m_port; }  // 0 for a Unix socket
  // http://127.0.0.1:9464/metrics, or unix:/run/jitcache/metrics.sock
  std::string url() const;
  void start();
  // Stops accepting, lets scrapes in flight finish within k_stop_grace, joins the thread.
  void stop();

 private:
  using Protocol = boost::asio::generic::stream_protocol;
  struct Connection;

  explicit MetricsServer(Render render);
  boost::asio::awaitable<void> accept_loop();
  boost::asio::awaitable<void> serve(std::shared_ptr<Connection> connection);
  // Closes the oldest connection that is not writing its reply; false when every one is.
  bool drop_oldest_waiting();

  Render m_render;
  // Before m_io: scrapes cut by stop() are destroyed with the io_context and count themselves out
  // of both.
  std::atomic<unsigned> m_active{0};
  std::list<Connection*> m_connections;  // open ones, oldest first; the metrics thread only
  boost::asio::io_context m_io{1};
  boost::asio::basic_socket_acceptor<Protocol> m_acceptor;
  std::optional<unix_socket::InstanceLock> m_unix_lock;  // a Unix socket's, held while it serves
  std::string m_host;
  std::uint16_t m_port = 0;
  std::string m_unix_path;
  std::thread m_thread;
};

}  // namespace jitcache::daemon::metrics
