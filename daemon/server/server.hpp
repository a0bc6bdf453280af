// The daemon's event loop: accepts connections on the listening socket, runs one Connection
// coroutine per client on its own strand, flushes usage counters periodically, and drains on
// SIGTERM/SIGINT (stop accepting, let in-flight replies finish within drain_timeout, flush, exit 0).
//
// Threads: `io_threads` run the io_context (accept loop and socket I/O only); `reader_threads` run
// LOOKUP/LIST/STATS against the store; one writer thread runs PUT/REMOVE and usage flushes.
// Thread safety: construct and run() from one thread; everything else is internal.
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <daemon/config/config.hpp>
#include <daemon/server/request_handler.hpp>
#include <daemon/server/server_context.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::server {

class Connection;

class Server {
 public:
  // Takes ownership of `listen_fd`, a bound and listening Unix stream socket.
  Server(const config::Config& config, store::Store& store, int listen_fd);
  ~Server();

  // Serves until drained; returns the process exit status (0 after a clean drain).
  int run();

 private:
  boost::asio::awaitable<void> accept_loop();
  boost::asio::awaitable<void> refuse_busy(boost::asio::local::stream_protocol::socket socket);
  void schedule_usage_flush();
  void begin_drain(int signal_number);
  void watch_drain();
  void track(const std::shared_ptr<Connection>& connection);
  void untrack(const Connection* connection);

  const config::Config& m_config;
  store::Store& m_store;
  stats::Counters m_counters;
  RequestHandler m_handler;
  boost::asio::io_context m_io;
  boost::asio::local::stream_protocol::acceptor m_acceptor;
  boost::asio::signal_set m_signals;
  boost::asio::steady_timer m_flush_timer;
  boost::asio::steady_timer m_drain_timer;
  boost::asio::steady_timer m_drain_watch;
  boost::asio::thread_pool m_readers;
  boost::asio::thread_pool m_writer;
  ServerContext m_context;
  std::mutex m_connections_mutex;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> m_connections;
};

}  // namespace jitcache::daemon::server
