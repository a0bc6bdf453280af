#include <daemon/metrics/metrics_server.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace jitcache::daemon::metrics {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;

namespace {

constexpr auto k_linger = std::chrono::seconds(1);
constexpr std::size_t k_max_linger_bytes = 64 << 10;
constexpr char k_content_type[] = "text/plain; version=0.0.4; charset=utf-8";

http::response<http::string_body> respond(const http::request<http::empty_body>& request,
                                          const MetricsServer::Render& render) {
  http::response<http::string_body> response;
  response.version(request.version());
  response.set(http::field::server, "jitcached " JITCACHE_VERSION);
  response.keep_alive(false);
  std::string_view path(request.target().data(), request.target().size());
  path = path.substr(0, path.find('?'));
  if (path != "/metrics") {
    response.result(http::status::not_found);
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = "not found: the metrics are at /metrics\n";
  } else if (request.method() != http::verb::get) {
    response.result(http::status::method_not_allowed);
    response.set(http::field::allow, "GET");
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = "only GET\n";
  } else {
    response.result(http::status::ok);
    response.set(http::field::content_type, k_content_type);
    response.body() = render();
  }
  response.prepare_payload();
  return response;
}

// The port of a bound TCP endpoint held as a generic one.
std::uint16_t port_of(const asio::generic::stream_protocol::endpoint& endpoint) {
  const sockaddr* address = endpoint.data();
  if (address->sa_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(address)->sin_port);
  if (address->sa_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(address)->sin6_port);
  return 0;
}

}  // namespace

// One connection, from its accept to its end; counted in m_active and listed in m_connections for
// as long as it lives.
struct MetricsServer::Connection {
  Connection(MetricsServer& server, Protocol::socket socket) : owner(server), stream(std::move(socket)) {
    owner.m_active.fetch_add(1);
    owner.m_connections.push_back(this);
  }
  ~Connection() {
    owner.m_connections.remove(this);
    owner.m_active.fetch_sub(1);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  MetricsServer& owner;
  beast::basic_stream<Protocol> stream;
  bool writing = false;  // its reply is being written: not to be dropped for a newcomer
};

MetricsServer::MetricsServer(Render render) : m_render(std::move(render)), m_acceptor(m_io) {}

common::Result<std::unique_ptr<MetricsServer>> MetricsServer::open(const config::ListenAddress& address, Render render,
                                                                   std::optional<gid_t> unix_group) {
  std::unique_ptr<MetricsServer> server(new MetricsServer(std::move(render)));
  boost::system::error_code ec;
  if (address.is_unix()) {
    auto listening = unix_socket::open_listening_socket(address.unix_path, unix_group);
    if (!listening) {
      return common::make_error(listening.error().code, "metrics socket: " + listening.error().message);
    }
    server->m_unix_lock.emplace(std::move(listening->lock));
    if (server->m_acceptor.assign(Protocol(AF_UNIX, 0), listening->fd, ec); ec) {
      ::close(listening->fd);
      return common::make_error(common::ErrorCode::io,
                                "cannot serve metrics on " + address.unix_path + ": " + ec.message());
    }
    server->m_unix_path = address.unix_path;
    return server;
  }

  const std::string where = address.host + ":" + std::to_string(address.port);
  const auto ip = asio::ip::make_address(address.host, ec);
  if (ec) return common::make_error(common::ErrorCode::invalid_argument, where + " is not an IP address");
  const Protocol::endpoint endpoint(tcp::endpoint(ip, address.port));
  auto fail = [&](std::string_view step) {
    return common::make_error(common::ErrorCode::io,
                              "cannot " + std::string(step) + " " + where + " for metrics: " + ec.message());
  };
  auto& acceptor = server->m_acceptor;
  if (acceptor.open(endpoint.protocol(), ec); ec) return fail("open a socket for");
  // The compile workers the daemon starts must not inherit the listening socket.
  ::fcntl(acceptor.native_handle(), F_SETFD, FD_CLOEXEC);
  if (acceptor.set_option(asio::socket_base::reuse_address(true), ec); ec) return fail("set SO_REUSEADDR on");
  if (acceptor.bind(endpoint, ec); ec) return fail("bind");
  if (acceptor.listen(asio::socket_base::max_listen_connections, ec); ec) return fail("listen on");
  const Protocol::endpoint bound = acceptor.local_endpoint(ec);
  if (ec) return fail("read the port of");
  server->m_host = address.host;
  server->m_port = port_of(bound);
  return server;
}

MetricsServer::~MetricsServer() { stop(); }

std::string MetricsServer::url() const {
  if (!m_unix_path.empty()) return std::string(config::k_unix_listen_prefix) + m_unix_path;
  const bool v6 = m_host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + m_host + "]" : m_host) + ":" + std::to_string(m_port) + "/metrics";
}

void MetricsServer::start() {
  asio::co_spawn(m_io, accept_loop(), asio::detached);
  m_thread = std::thread([this] { m_io.run(); });
}

void MetricsServer::stop() {
  if (!m_thread.joinable()) return;
  asio::post(m_io, [this] {
    boost::system::error_code ignored;
    m_acceptor.close(ignored);
  });
  // Rationale: a scrape in flight renders from memory and one cached store read, well within the
  // grace; one stuck on a silent client is cut (the scraper retries at its next interval).
  const auto deadline = std::chrono::steady_clock::now() + k_stop_grace;
  while (m_active.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  m_io.stop();
  m_thread.join();
}

bool MetricsServer::drop_oldest_waiting() {
  const auto oldest = std::find_if(m_connections.begin(), m_connections.end(),
                                   [](const Connection* connection) { return !connection->writing; });
  if (oldest == m_connections.end()) return false;
  // Its pending read or linger ends with operation_aborted, and its coroutine returns.
  Connection* dropped = *oldest;
  m_connections.erase(oldest);
  dropped->stream.close();
  return true;
}

awaitable<void> MetricsServer::accept_loop() {
  for (;;) {
    boost::system::error_code ec;
    Protocol::socket socket = co_await m_acceptor.async_accept(asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !m_acceptor.is_open()) co_return;
      spdlog::warn("metrics: accept failed: {}", ec.message());
      continue;
    }
    if (m_connections.size() >= k_max_connections && !drop_oldest_waiting()) {
      spdlog::debug("metrics: {} replies being written, closing one more connection", k_max_connections);
      continue;  // the socket closes as it goes out of scope
    }
    asio::co_spawn(m_io, serve(std::make_shared<Connection>(*this, std::move(socket))), asio::detached);
  }
}

awaitable<void> MetricsServer::serve(std::shared_ptr<Connection> connection) {
  auto& stream = connection->stream;
  beast::flat_buffer buffer(k_max_request_bytes);
  http::request_parser<http::empty_body> parser;
  parser.header_limit(k_max_request_bytes);
  boost::system::error_code ec;
  // One deadline for the whole request, counted from the accept: a header sent a byte at a time
  // gets no more time than one that never comes.
  stream.expires_after(k_request_deadline);
  co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
  http::response<http::string_body> response;
  const bool bad_request =
      ec.category() == http::make_error_code(http::error::header_limit).category() && ec != http::error::end_of_stream;
  if (!ec) {
    response = respond(parser.get(), m_render);
  } else if (bad_request) {
    // Malformed, too large, or with a body: say so (the peer left or went silent: just close).
    response.result(http::status::bad_request);
    response.keep_alive(false);
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = "bad request: " + ec.message() + "\n";
    response.prepare_payload();
  } else {
    spdlog::debug("metrics: no request read: {}", ec.message());
    co_return;
  }
  connection->writing = true;
  stream.expires_after(k_write_deadline);
  co_await http::async_write(stream, response, asio::redirect_error(use_awaitable, ec));
  connection->writing = false;
  if (ec) {
    spdlog::debug("metrics: reply not delivered: {}", ec.message());
    co_return;
  }
  stream.socket().shutdown(Protocol::socket::shutdown_send, ec);
  if (!bad_request) co_return;
  // Rationale: closing with unread request bytes makes the kernel answer with a reset, which can
  // destroy the 400 before the client has read it; read and drop what it still sends, within a
  // short deadline and a bound.
  stream.expires_after(k_linger);
  std::array<char, 4096> dropped;
  for (std::size_t total = 0; total < k_max_linger_bytes;) {
    const std::size_t n =
        co_await stream.async_read_some(asio::buffer(dropped), asio::redirect_error(use_awaitable, ec));
    if (ec) break;
    total += n;
  }
}

}  // namespace jitcache::daemon::metrics
