#include <daemon/server/server.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <daemon/ops/compile_request.hpp>
#include <daemon/server/connection.hpp>
#include <daemon/server/worker_loop.hpp>

namespace jitcache::daemon::server {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using stats::Counters;

namespace {
// Rationale: a warning that repeats (accept failing at the descriptor limit) is worth a line every
// few seconds while it lasts, not one per failure; STATS counts every one.
constexpr std::chrono::seconds k_warning_interval{10};
// How long a worker stops accepting after accept failed: long enough for connections to end and
// give descriptors back, short enough that the clients waiting in the backlog hardly notice.
constexpr std::chrono::milliseconds k_accept_pause{100};
}  // namespace

Server::Server(const config::Config& config, store::StoreSet stores, int listen_fd, stats::Counters& counters,
               policy::TrustPolicy trust, ops::CompileRequests* compile, publish::Publisher* publisher,
               ServiceHooks hooks, DescriptorPlan descriptors, SocketOwner socket_owner, ops::BundleService* bundles)
    : m_config(config),
      m_store_maintenance(stores.maintenance),
      m_compile(compile),
      m_counters(counters),
      m_handler(stores, m_counters, config.max_frame_bytes, compile, publisher,
                ops::TenantPolicy{std::move(trust), config.reports_per_minute}, bundles),
      m_uid_connections(config.max_connections_per_uid),
      m_listen_fd(listen_fd),
      m_socket_owner(socket_owner),
      // Rationale: SIGHUP too, which by default kills at once, mid-request: a terminal that closes on
      // a daemon run in the foreground, or a `kill -HUP` meant as a reload (there is none: a
      // restart reads the configuration again) now drain as SIGTERM does (docs/operations.md).
      m_signals(m_accept_io, SIGTERM, SIGINT, SIGHUP),
      m_flush_timer(m_accept_io),
      m_drain_timer(m_accept_io),
      m_drain_watch(m_accept_io),
      m_hooks(std::move(hooks)),
      m_watchdog_timer(m_accept_io),
      // Rationale: each thread waits on the network for at most remote_timeout per lookup; eight
      // keep 200 misses a second flowing at a 20 ms round trip, and a slower remote queues misses
      // here, never hits (docs/operations.md "A fleet").
      m_remote_lane(config.remote.empty() ? nullptr : std::make_unique<boost::asio::thread_pool>(8)),
      // Rationale: as much again as the hot image cache: the images worth a memfd are the ones
      // served often, which are the ones that cache holds.
      m_descriptors(config.hot_cache_size, descriptors.cached_image_descriptors),
      m_request_bytes(config.request_bytes_per_uid, config.request_bytes_total),
      m_descriptor_warnings(k_warning_interval),
      m_accept_warnings(k_warning_interval),
      m_context{config,
                m_handler,
                m_counters,
                m_lanes,
                m_remote_lane.get(),
                m_descriptors,
                m_request_bytes,
                m_descriptor_warnings,
                {}} {
  for (unsigned i = 0; i < config.worker_threads; ++i) m_workers.push_back(std::make_unique<Worker>(listen_fd));
  // Only the workers' duplicates hold a socket systemd passed from here on: systemd's own copy
  // keeps it listening for the next instance. One the daemon bound stays open here until the drain
  // shuts it (begin_drain).
  if (m_socket_owner == SocketOwner::service_manager) ::close(std::exchange(m_listen_fd, -1));
}

Server::Worker::Worker(int listen_fd) : guard(boost::asio::make_work_guard(io)), acceptor(io) {
  // Each worker's acceptor owns a duplicate of the listening socket (asio closes what it owns).
  const int fd = ::fcntl(listen_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("cannot duplicate the listening socket: ") + std::strerror(errno));
  acceptor.assign(asio::local::stream_protocol(), fd);
}

Server::~Server() {
  m_lanes.join();
  if (m_remote_lane) m_remote_lane->join();
  if (m_listen_fd >= 0) ::close(m_listen_fd);
}

void Server::track(const std::shared_ptr<Connection>& connection) {
  std::lock_guard lock(m_connections_mutex);
  m_connections.emplace(connection.get(), connection);
}

void Server::untrack(const Connection* connection) {
  std::lock_guard lock(m_connections_mutex);
  m_connections.erase(connection);
}

awaitable<void> Server::refuse_busy(asio::local::stream_protocol::socket socket, std::string message) {
  // Answer before closing so the client reports "busy" instead of a mysterious disconnect.
  Counters::add(m_counters.connections_refused);
  m_counters.count_error(proto::Status::busy);
  const proto::Payload frame =
      proto::encode_frame(proto::Op::none, proto::Status::busy, 0, proto::encode_error_message(message));
  boost::system::error_code ec;
  co_await asio::async_write(socket, asio::buffer(frame), asio::redirect_error(use_awaitable, ec));
  socket.close(ec);
}

awaitable<void> Server::accept_loop(Worker& worker) {
  while (!m_context.draining.load()) {
    auto executor = worker.io.get_executor();
    asio::local::stream_protocol::socket socket(executor);
    boost::system::error_code ec;
    co_await worker.acceptor.async_accept(socket, asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || m_context.draining.load()) break;
      // EMFILE and friends: keep serving the connections we have, stop accepting for a moment
      // (the new connections wait in the backlog) rather than spin on a failing accept, and say so
      // once in a while, not once a failure.
      Counters::add(m_counters.accept_failures);
      if (const std::uint64_t failures = m_accept_warnings.admit()) {
        const bool descriptors = ec == asio::error::no_descriptors || ec.value() == ENFILE;
        spdlog::warn("accept failed: {} ({} time(s) since the last warning); pausing accepts for {} ms{}", ec.message(),
                     failures, k_accept_pause.count(),
                     descriptors ? ": out of file descriptors, raise LimitNOFILE or lower max_connections" : "");
      }
      asio::steady_timer pause(worker.io, k_accept_pause);
      co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
      continue;
    }
    admit(std::move(socket), executor);
  }
}

void Server::accept_backlog(Worker& worker) {
  boost::system::error_code ec;
  worker.acceptor.non_blocking(true, ec);
  while (!ec) {
    auto executor = worker.io.get_executor();
    asio::local::stream_protocol::socket socket(executor);
    worker.acceptor.accept(socket, ec);  // would_block once the backlog is empty
    if (!ec) admit(std::move(socket), executor);
  }
}

void Server::admit(asio::local::stream_protocol::socket socket, asio::io_context::executor_type executor) {
  // Workers accept concurrently, so at the limit a few may each let one more in before the count
  // catches up; the limit protects file descriptors and memory, not an exact number.
  if (m_counters.connections.load() >= m_config.max_connections) {
    asio::co_spawn(executor,
                   refuse_busy(std::move(socket), "jitcached is at max_connections (" +
                                                      std::to_string(m_config.max_connections) + "); try again later"),
                   asio::detached);
    return;
  }
  auto peer = policy::read_peer_credentials(socket.native_handle());
  if (!peer) {
    spdlog::warn("dropping a connection: {}", peer.error().message);
    return;
  }
  const uid_t uid = peer->uid;
  if (!m_uid_connections.try_acquire(uid)) {
    Counters::add(m_counters.connections_refused_per_uid);
    spdlog::debug("refusing a connection of {}: at max_connections_per_uid", peer->describe());
    asio::co_spawn(executor,
                   refuse_busy(std::move(socket), "uid " + std::to_string(uid) + " has " +
                                                      std::to_string(m_uid_connections.limit()) +
                                                      " connections open (max_connections_per_uid); try again later"),
                   asio::detached);
    return;
  }
  auto connection = std::make_shared<Connection>(std::move(socket), executor, m_context, std::move(*peer));
  track(connection);
  asio::co_spawn(
      executor, [this, connection]() -> awaitable<void> { co_await connection->run(); },
      [this, raw = connection.get(), uid](std::exception_ptr error) {
        untrack(raw);
        m_uid_connections.release(uid);
        if (error) {
          try {
            std::rethrow_exception(error);
          } catch (const std::exception& e) {
            spdlog::error("connection ended by an unexpected error: {}", e.what());
          }
        }
      });
}

void Server::schedule_usage_flush() {
  m_flush_timer.expires_after(m_config.usage_flush_interval);
  m_flush_timer.async_wait([this](boost::system::error_code ec) {
    if (ec || m_context.draining.load()) return;
    asio::post(m_lanes.pool(ops::Lane::writer), [this] {
      if (auto flushed = m_store_maintenance.flush_usage(); !flushed) {
        spdlog::warn("could not write usage counters: {}", flushed.error().message);
      }
    });
    schedule_usage_flush();
  });
}

void Server::start_watchdog() {
  if (!m_hooks.watchdog || m_hooks.watchdog_interval.count() <= 0) return;
  m_heartbeats_seen.assign(m_workers.size(), 0);
  m_hooks.watchdog();
  post_heartbeats();
  schedule_watchdog();
}

void Server::post_heartbeats() {
  for (auto& worker : m_workers) {
    asio::post(worker->io, [&heartbeat = worker->heartbeat] { heartbeat.fetch_add(1); });
  }
}

void Server::schedule_watchdog() {
  // Rationale: half the interval, as sd_watchdog_enabled(3) advises, so one late tick is not a kill.
  m_watchdog_timer.expires_after(m_hooks.watchdog_interval / 2);
  m_watchdog_timer.async_wait([this](boost::system::error_code ec) {
    if (ec || m_context.draining.load()) return;
    std::size_t silent = 0;
    for (std::size_t i = 0; i < m_workers.size(); ++i) {
      const std::uint64_t now = m_workers[i]->heartbeat.load();
      if (now == m_heartbeats_seen[i]) ++silent;
      m_heartbeats_seen[i] = now;
    }
    if (silent == 0) {
      m_hooks.watchdog();
    } else {
      spdlog::warn("{} worker thread(s) did not answer within {} ms: not pinging the watchdog", silent,
                   std::chrono::duration_cast<std::chrono::milliseconds>(m_hooks.watchdog_interval / 2).count());
    }
    post_heartbeats();
    schedule_watchdog();
  });
}

void Server::begin_drain(int signal_number) {
  spdlog::info("received {}: draining ({} connections, at most {} ms)",
               signal_number == SIGINT   ? "SIGINT"
               : signal_number == SIGHUP ? "SIGHUP"
                                         : "SIGTERM",
               m_counters.connections.load(), m_config.drain_timeout.count());
  if (m_hooks.stopping) m_hooks.stopping();
  m_watchdog_timer.cancel();
  m_context.draining = true;
  // Rationale: a socket the daemon bound stops listening for good, and closing it would reset the
  // connections still queued in its backlog (clients that connected and sent a request). Shutting
  // it for reading first makes every further connect fail at once (ECONNREFUSED; the next
  // instance binds the path again) while the queue stays, so the workers can take what is queued
  // and serve it before they close it. A socket systemd passed keeps its queue for the next
  // instance: just close. Each acceptor belongs to its worker's thread: close it there.
  const bool own_socket = m_socket_owner == SocketOwner::daemon && m_listen_fd >= 0;
  if (own_socket) {
    ::shutdown(m_listen_fd, SHUT_RD);
    ::close(std::exchange(m_listen_fd, -1));
  }
  for (auto& worker : m_workers) {
    asio::post(worker->io, [this, own_socket, &worker = *worker] {
      if (own_socket) accept_backlog(worker);
      boost::system::error_code ignored;
      worker.acceptor.close(ignored);
    });
  }
  m_flush_timer.cancel();
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard lock(m_connections_mutex);
    for (auto& [raw, weak] : m_connections) {
      if (auto c = weak.lock()) open.push_back(std::move(c));
    }
  }
  for (auto& c : open) c->close_if_idle();
  watch_drain();
  m_drain_timer.expires_after(m_config.drain_timeout);
  m_drain_timer.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    {
      std::lock_guard lock(m_connections_mutex);
      if (!m_connections.empty()) spdlog::warn("drain timeout: closing {} connections", m_connections.size());
      for (auto& [raw, weak] : m_connections) {
        if (auto c = weak.lock()) c->force_close();
      }
    }
    // Rationale: a connection awaiting a compile ends only when the compile answers, which may be
    // minutes away; stopping the service kills its workers and answers every waiter at once. The
    // workers are killed promptly, so this blocks the signal thread briefly.
    if (m_compile != nullptr) m_compile->service().stop();
  });
}

void Server::watch_drain() {
  // Rationale: the drain timer would keep run() alive for the whole drain_timeout after the last
  // connection has gone, so poll briefly (only while draining) and cancel it once nothing is left.
  m_drain_watch.expires_after(std::chrono::milliseconds(10));
  m_drain_watch.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    {
      std::lock_guard lock(m_connections_mutex);
      if (m_connections.empty()) {
        m_drain_timer.cancel();
        return;
      }
    }
    watch_drain();
  });
}

int Server::run() {
  m_signals.async_wait([this](boost::system::error_code ec, int signal_number) {
    if (!ec) begin_drain(signal_number);
  });
  schedule_usage_flush();
  start_watchdog();
  for (auto& worker : m_workers) asio::co_spawn(worker->io, accept_loop(*worker), asio::detached);

  std::vector<std::thread> threads;
  const std::chrono::microseconds busy_poll(m_config.busy_poll_us);
  for (auto& worker : m_workers) {
    threads.emplace_back([&worker, busy_poll] { run_worker_loop(worker->io, busy_poll); });
  }
  m_accept_io.run();  // returns once draining is over: no accept, no timers, no connections left
  for (auto& worker : m_workers) worker->guard.reset();
  for (auto& t : threads) t.join();
  // A VERIFY in progress runs to its end (it has no cancellation): its reply is simply not sent.
  // So does a bundle export or import: an import's transaction commits or rolls back whole.
  m_lanes.join();
  if (m_remote_lane) m_remote_lane->join();  // each lookup there ends within remote_timeout
  if (auto flushed = m_store_maintenance.flush_usage(); !flushed) {
    spdlog::warn("could not write usage counters at shutdown: {}", flushed.error().message);
  }
  spdlog::info("jitcached stopped");
  return 0;
}

}  // namespace jitcache::daemon::server
