// The daemon's event loop: accepts connections on the listening socket, runs one Connection
// coroutine per client on the io_context of the worker that accepted it, flushes usage counters periodically, and
// drains on SIGTERM/SIGINT/SIGHUP (stop accepting, answer what each client had already sent within drain_timeout,
// flush, exit 0; PROTOCOL.md §1 "Restarts").
//
// Threads: one runs signals and timers (m_accept_io) and never touches the store; `worker_threads`
// each accept on the shared listening socket and serve what they accepted, with an io_context of
// their own (socket I/O, deadlines, and the ops of the worker lane: LOOKUP, LIST, STATS, ...); the
// other lanes of the op table (daemon/ops/op_table.hpp) have threads of their own (lanes.hpp): one
// writer thread runs PUT, REMOVE, REPORT_FAILURE, GC and usage flushes.
// Rationale: one io_context per thread keeps every step of a connection on one thread. A single
// io_context run by several threads handed completions between them: at 1 client, 5 thread
// wake-ups and 126 us of CPU per 4 KB LOOKUP, against 1 and 41 us this way (docs/benchmarks.md).
// Thread safety: construct and run() from one thread; everything else is internal.
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <daemon/config/config.hpp>
#include <daemon/ops/request_handler.hpp>
#include <daemon/policy/request_bytes_budget.hpp>
#include <daemon/policy/uid_connection_counts.hpp>
#include <daemon/server/descriptor_plan.hpp>
#include <daemon/server/lanes.hpp>
#include <daemon/server/server_context.hpp>
#include <daemon/server/warning_throttle.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/store_set.hpp>

namespace jitcache::daemon::server {

class Connection;

// What the service manager hears from the server (startup/service_manager.hpp); empty: nothing.
struct ServiceHooks {
  // Called every half `watchdog_interval` while the event loop runs and every worker thread has
  // answered since the last call; a worker stuck for good stops the pings and systemd restarts us.
  std::function<void()> watchdog;
  std::chrono::microseconds watchdog_interval{0};  // 0: no watchdog
  std::function<void()> stopping;                  // a drain has begun
};

// Who owns the listening socket, which decides how a drain stops listening (begin_drain).
enum class SocketOwner {
  daemon,           // bound by jitcached itself: it stops listening for good at the drain
  service_manager,  // passed by systemd, which keeps it listening for the next instance
};

class Server {
 public:
  // `stores`: what requests are served from (the request handler takes them all) and what the
  // periodic usage flush writes (stores.maintenance); they must outlive the server.
  // Takes ownership of `listen_fd`, a bound and listening Unix stream socket. `counters` (which the
  // compile path counts into too) and `compile` (the COMPILE op, or null when the daemon cannot
  // compile) must outlive the server.
  // `publisher` (null when publishing is off) must outlive the server too. `trust`: who is trusted
  // (config keys trusted_users and trusted_groups, resolved).
  // `bundles` (null: no EXPORT_BUNDLE, IMPORT_BUNDLE) must outlive the server.
  // `descriptors`: how many memfds to keep (startup/descriptor_limit.hpp plans it from the limit;
  // config.max_connections must already be the plan's). `socket_owner`: who made `listen_fd`.
  Server(const config::Config& config, store::StoreSet stores, int listen_fd, stats::Counters& counters,
         policy::TrustPolicy trust, ops::CompileRequests* compile = nullptr, publish::Publisher* publisher = nullptr,
         ServiceHooks hooks = {}, DescriptorPlan descriptors = {}, SocketOwner socket_owner = SocketOwner::daemon,
         ops::BundleService* bundles = nullptr);
  ~Server();

  // Serves until drained; returns the process exit status (0 after a clean drain).
  int run();

 private:
  struct Worker;
  boost::asio::awaitable<void> accept_loop(Worker& worker);
  // Serves an accepted connection, or refuses it over a connection limit.
  void admit(boost::asio::local::stream_protocol::socket socket, boost::asio::io_context::executor_type executor);
  // Draining a socket the daemon owns: takes the connections still queued in the backlog, which
  // closing the socket would reset, so that their first requests are served too.
  void accept_backlog(Worker& worker);
  boost::asio::awaitable<void> refuse_busy(boost::asio::local::stream_protocol::socket socket, std::string message);
  void schedule_usage_flush();
  void start_watchdog();
  void post_heartbeats();
  void schedule_watchdog();
  void begin_drain(int signal_number);
  void watch_drain();
  void track(const std::shared_ptr<Connection>& connection);
  void untrack(const Connection* connection);

  const config::Config& m_config;
  store::Maintenance& m_store_maintenance;  // the usage flushes; the handler serves from the rest
  ops::CompileRequests* m_compile;
  stats::Counters& m_counters;
  ops::RequestHandler m_handler;
  policy::UidConnectionCounts m_uid_connections;
  boost::asio::io_context m_accept_io;
  // Rationale: every worker accepts on the shared listening socket itself and serves what it
  // accepted, so a new connection wakes one sleeping thread, not an accept thread and then a worker:
  // on an idle daemon each wake-up costs ~0.1-0.2 ms (docs/benchmarks.md, bench_connection_setup).
  struct Worker {
    explicit Worker(int listen_fd);
    boost::asio::io_context io{1};
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard;
    boost::asio::local::stream_protocol::acceptor acceptor;
    std::atomic<std::uint64_t> heartbeat{0};  // bumped by a task the watchdog posts to this thread
  };
  std::vector<std::unique_ptr<Worker>> m_workers;
  int m_listen_fd = -1;  // SocketOwner::daemon: kept until the drain, which shuts it
  SocketOwner m_socket_owner;
  boost::asio::signal_set m_signals;
  boost::asio::steady_timer m_flush_timer;
  boost::asio::steady_timer m_drain_timer;
  boost::asio::steady_timer m_drain_watch;
  ServiceHooks m_hooks;
  boost::asio::steady_timer m_watchdog_timer;
  std::vector<std::uint64_t> m_heartbeats_seen;
  Lanes m_lanes;  // every lane but the workers' (daemon/ops/op_table.hpp), and the usage flushes (writer)
  std::unique_ptr<boost::asio::thread_pool> m_remote_lane;  // LOOKUPs that ask the remotes (with `remote`)
  ImageDescriptors m_descriptors;
  policy::RequestBytesBudget m_request_bytes;
  WarningThrottle m_descriptor_warnings;
  WarningThrottle m_accept_warnings;
  ServerContext m_context;
  std::mutex m_connections_mutex;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> m_connections;
};

}  // namespace jitcache::daemon::server
