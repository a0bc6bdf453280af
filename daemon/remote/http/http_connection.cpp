#include <daemon/remote/http/http_connection.hpp>

#include <cstdint>
#include <limits>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/span.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/span_body.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <daemon/remote/http/host_resolver.hpp>
#include <daemon/remote/http/tls_client_context.hpp>

namespace jitcache::daemon::remote::http {

namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using boost::system::error_code;
using common::ErrorCode;
using common::make_error;

// A response header larger than this is not from a cache server: corrupt.
constexpr std::uint32_t k_header_limit = 16 * 1024;
// The body of an answer other than a wanted 200 (an error page, a PUT's "201 Created" page) is read,
// to keep the connection, only up to this; a longer one costs the connection instead.
constexpr std::size_t k_other_body_limit = 64 * 1024;

constexpr char k_user_agent[] = "jitcache";

// Rationale: Beast reads at most what the buffer can take without growing, and a flat_buffer that
// the parser empties as it goes never grows past its first 512 bytes: a 10 MB body from nginx on
// loopback took 20,480 reads and 70 ms; with 64 KiB reserved, 10 ms (curl: 8 ms).
constexpr std::size_t k_read_buffer_size = 64 * 1024;

bool is_timeout(const error_code& error) { return error == beast::error::timeout; }

// The server closed (or reset) the connection without a byte of an answer.
bool is_closed(const error_code& error) {
  return error == bhttp::error::end_of_stream || error == boost::asio::error::eof ||
         error == boost::asio::error::connection_reset || error == boost::asio::error::broken_pipe;
}

// Bytes came that are not an HTTP response, or not a TLS record, or one cut short.
bool is_protocol_violation(const error_code& error) {
  return error.category() == bhttp::make_error_code(bhttp::error::bad_version).category() ||
         error.category() == ssl::error::get_stream_category() ||
         error.category() == boost::asio::error::get_ssl_category();
}

common::Error read_error(const error_code& error, const std::string& peer, const std::string& target) {
  if (is_timeout(error)) {
    return make_error(ErrorCode::timeout, "no complete answer from " + peer + " for " + target + " by the deadline");
  }
  if (error == bhttp::error::partial_message) {
    return make_error(ErrorCode::corrupt, "the answer from " + peer + " for " + target + " was cut short");
  }
  if (is_closed(error)) {
    return make_error(ErrorCode::io, peer + " closed the connection without answering " + target);
  }
  if (is_protocol_violation(error)) {
    return make_error(ErrorCode::corrupt,
                      "the answer from " + peer + " for " + target + " is not HTTP: " + error.message());
  }
  return make_error(ErrorCode::io, "reading the answer from " + peer + " for " + target + ": " + error.message());
}

template <class Body>
void add_common_fields(bhttp::request<Body>& message, const HttpRequest& request, const std::string& host_header,
                       const std::string& authorization) {
  message.method(request.method);
  message.target(request.target);
  message.version(11);
  message.set(bhttp::field::host, host_header);
  message.set(bhttp::field::user_agent, k_user_agent);
  if (!authorization.empty()) message.set(bhttp::field::authorization, authorization);
  if (request.if_none_match) message.set(bhttp::field::if_none_match, "*");
  message.keep_alive(true);
}

}  // namespace

HttpConnection::HttpConnection(const HttpSettings& settings, ssl::context* tls)
    : m_peer(settings.host.find(':') != std::string::npos ? "[" + settings.host + "]:" + std::to_string(settings.port)
                                                          : settings.host + ":" + std::to_string(settings.port)) {
  m_buffer.reserve(k_read_buffer_size);
  if (tls != nullptr) {
    m_tls.emplace(m_io, *tls);
  } else {
    m_plain.emplace(m_io);
  }
}

HttpConnection::~HttpConnection() = default;

beast::tcp_stream& HttpConnection::tcp() { return m_tls ? beast::get_lowest_layer(*m_tls) : *m_plain; }

template <class Operation>
error_code HttpConnection::run(Operation&& operation) {
  error_code result = boost::asio::error::would_block;
  operation([&result](error_code error, auto&&...) { result = error; });
  m_io.restart();
  m_io.run();
  return result;
}

common::Result<std::unique_ptr<HttpConnection>> HttpConnection::open(const HttpSettings& settings, ssl::context* tls,
                                                                     Deadline deadline) {
  std::unique_ptr<HttpConnection> connection(new HttpConnection(settings, tls));
  JITCACHE_TRY_ASSIGN(const auto endpoints, resolve_host(settings.host, settings.port, deadline));
  connection->tcp().expires_at(deadline);
  error_code error = connection->run([&](auto handler) { connection->tcp().async_connect(endpoints, handler); });
  if (is_timeout(error)) {
    return make_error(ErrorCode::timeout, "connecting to " + connection->m_peer + " outlasted the deadline");
  }
  if (error) {
    return make_error(ErrorCode::unavailable, "cannot connect to " + connection->m_peer + ": " + error.message());
  }
  connection->tcp().socket().set_option(boost::asio::ip::tcp::no_delay(true), error);
  if (connection->m_tls) {
    JITCACHE_TRY(prepare_tls_session(connection->m_tls->native_handle(), settings.host));
    error =
        connection->run([&](auto handler) { connection->m_tls->async_handshake(ssl::stream_base::client, handler); });
    if (is_timeout(error)) {
      return make_error(ErrorCode::timeout, "the TLS handshake with " + connection->m_peer + " outlasted the deadline");
    }
    if (error) {
      std::string why = tls_verification_failure(connection->m_tls->native_handle());
      if (why.empty()) why = error.message();
      return make_error(ErrorCode::unavailable, "the TLS handshake with " + connection->m_peer + " failed: " + why);
    }
  }
  connection->m_idle_since = Clock::now();
  return connection;
}

common::Result<HttpResponse> HttpConnection::exchange(const HttpRequest& request, const std::string& host_header,
                                                      const std::string& authorization, Deadline deadline) {
  m_reusable = false;
  m_closed_before_answering = false;
  tcp().expires_at(deadline);

  const auto write = [&](auto& message) {
    return run([&](auto handler) {
      if (m_tls) {
        bhttp::async_write(*m_tls, message, handler);
      } else {
        bhttp::async_write(*m_plain, message, handler);
      }
    });
  };
  error_code error;
  if (request.method == bhttp::verb::put) {
    bhttp::request<bhttp::span_body<const char>> message;
    add_common_fields(message, request, host_header, authorization);
    message.set(bhttp::field::content_type, "application/octet-stream");
    message.body() = beast::span<const char>(request.body.data(), request.body.size());
    message.prepare_payload();
    error = write(message);
  } else {
    bhttp::request<bhttp::empty_body> message;
    add_common_fields(message, request, host_header, authorization);
    message.prepare_payload();
    error = write(message);
  }
  if (is_timeout(error)) {
    return make_error(ErrorCode::timeout, "sending " + request.target + " to " + m_peer + " outlasted the deadline");
  }
  if (error) {
    m_closed_before_answering = is_closed(error);
    return make_error(ErrorCode::io, "sending " + request.target + " to " + m_peer + ": " + error.message());
  }

  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(k_header_limit);
  // No limit while the header is read: which limit applies depends on the status (below).
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  if (request.method == bhttp::verb::head) parser.skip(true);
  const auto read = [&](bool header_only) {
    return run([&](auto handler) {
      if (m_tls && header_only) {
        bhttp::async_read_header(*m_tls, m_buffer, parser, handler);
      } else if (m_tls) {
        bhttp::async_read(*m_tls, m_buffer, parser, handler);
      } else if (header_only) {
        bhttp::async_read_header(*m_plain, m_buffer, parser, handler);
      } else {
        bhttp::async_read(*m_plain, m_buffer, parser, handler);
      }
    });
  };
  error = read(true);
  if (error) {
    m_closed_before_answering = is_closed(error) && !parser.got_some() && m_buffer.size() == 0;
    return read_error(error, m_peer, request.target);
  }

  HttpResponse response;
  response.status = parser.get().result_int();
  const bool wanted = request.wants_body && response.status == 200;
  if (!parser.is_done()) {
    const std::size_t limit = wanted ? request.max_body : k_other_body_limit;
    const auto length = parser.content_length();
    if (length && *length > limit) {
      if (!wanted) return response;  // not reusable: its body is left unread
      return make_error(ErrorCode::too_large, request.target + " on " + m_peer + " is " + std::to_string(*length) +
                                                  " bytes, over the limit of " + std::to_string(limit));
    }
    parser.body_limit(limit);
    error = read(false);
    if (error == bhttp::error::body_limit) {
      if (!wanted) return response;
      return make_error(ErrorCode::too_large,
                        request.target + " on " + m_peer + " is over the limit of " + std::to_string(limit) + " bytes");
    }
    if (error) return read_error(error, m_peer, request.target);
  }
  m_reusable = parser.get().keep_alive() && !parser.need_eof() && m_buffer.size() == 0;
  if (wanted) response.body = std::move(parser.get().body());
  m_idle_since = Clock::now();
  return response;
}

}  // namespace jitcache::daemon::remote::http
