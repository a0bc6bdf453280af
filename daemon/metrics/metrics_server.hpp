// The metrics endpoint: a small HTTP/1.1 server (Boost.Beast) on a thread and io_context of its
// own, answering GET /metrics with the Prometheus text format (content type
// text/plain; version=0.0.4) and 404 to any other path. One request per connection.
//
// Limits: a request (line and headers) of at most k_max_request_bytes and no body; the whole
// request within k_read_deadline and the reply taken within k_write_deadline; at most
// k_max_scrapes connections at once (one more is closed at once).
// Rationale: nothing here touches the client socket's accept or worker threads: a scrape renders
// on this thread, from atomics and the store's thread-safe reads (store_figures.hpp bounds those),
// so a slow or hostile scraper costs this thread, never a LOOKUP.
// Thread safety: open(), start() and stop() from one thread (the main thread); the rest runs on
// the metrics thread.
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <daemon/config/listen_address.hpp>
#include <jitcache/proto/result.hpp>

namespace jitcache::daemon::metrics {

inline constexpr std::size_t k_max_request_bytes = 8 << 10;
inline constexpr auto k_read_deadline = std::chrono::seconds(5);
inline constexpr auto k_write_deadline = std::chrono::seconds(10);
inline constexpr unsigned k_max_scrapes = 4;
// How long stop() lets scrapes in flight finish.
inline constexpr auto k_stop_grace = std::chrono::seconds(1);

class MetricsServer {
 public:
  using Render = std::function<std::string()>;

  // Binds and listens now, so a port in use is a start-up error; serves only after start().
  static proto::Result<std::unique_ptr<MetricsServer>> open(const config::ListenAddress& address, Render render);
  ~MetricsServer();  // stop()
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  std::uint16_t port() const { return m_port; }
  std::string url() const;  // http://127.0.0.1:9464/metrics
  void start();
  // Stops accepting, lets scrapes in flight finish within k_stop_grace, joins the thread.
  void stop();

 private:
  explicit MetricsServer(Render render);
  boost::asio::awaitable<void> accept_loop();
  boost::asio::awaitable<void> serve(boost::asio::ip::tcp::socket socket);

  Render m_render;
  // Before m_io: scrapes cut by stop() are destroyed with the io_context and count themselves out.
  std::atomic<unsigned> m_active{0};
  boost::asio::io_context m_io{1};
  boost::asio::ip::tcp::acceptor m_acceptor;
  std::string m_host;
  std::uint16_t m_port = 0;
  std::thread m_thread;
};

}  // namespace jitcache::daemon::metrics
