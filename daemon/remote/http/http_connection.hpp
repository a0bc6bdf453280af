// One keep-alive connection to the HTTP server, plain or TLS, on which requests are sent one at a
// time, each within a deadline that is a true deadline: connecting, the TLS handshake, writing the
// request and reading the response all end when it passes, however the server behaves (silent,
// trickling, stopped).
//
// Rationale: Beast's tcp_stream closes its socket when the time set by expires_at passes, which
// ends whatever operation is pending on it; the operations are asynchronous only to have that timer,
// and run on an io_context of the connection's own, driven by the calling thread until the one
// operation completes. So no thread of the daemon's serves the remote, a call waits in exactly
// one place, and a connection never outlives its socket's owner.
//
// A connection is no longer reusable after a failure of any kind, after a response that said
// `Connection: close` or had to be read to the end of the stream, and after a response whose body it
// did not read (too large).
//
// Thread safety: one thread at a time (the pool hands a connection to one call).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <common/result.hpp>
#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/http/http_exchange.hpp>
#include <daemon/remote/http/http_settings.hpp>

namespace jitcache::daemon::remote::http {

class HttpConnection {
 public:
  // Resolves the host, connects to the first address that accepts and, for https, completes a
  // verified TLS handshake (`tls` is then the backend's context). unavailable when it cannot
  // connect or the handshake fails (the certificate's verification error in the message); timeout
  // when the deadline passes first.
  static common::Result<std::unique_ptr<HttpConnection>> open(const HttpSettings& settings,
                                                              boost::asio::ssl::context* tls, Deadline deadline);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends the request (with the headers every request carries, `fixed_headers`: Host, User-Agent,
  // Authorization) and reads the response. Errors: timeout, io (a socket failed, the server closed
  // without answering), corrupt (not an HTTP response, or one cut short), too_large (a wanted body
  // over request.max_body; its rest is not read).
  common::Result<HttpResponse> exchange(const HttpRequest& request, const std::string& host_header,
                                        const std::string& authorization, Deadline deadline);

  bool reusable() const { return m_reusable; }
  // Whether the last exchange failed before any byte of a response arrived, in a way that a server
  // closing an idle kept-alive connection causes (EOF, reset, broken pipe): the request may be sent
  // again on a new connection.
  bool closed_before_answering() const { return m_closed_before_answering; }
  Clock::time_point idle_since() const { return m_idle_since; }

 private:
  HttpConnection(const HttpSettings& settings, boost::asio::ssl::context* tls);
  boost::beast::tcp_stream& tcp();
  template <class Operation>
  boost::system::error_code run(Operation&& operation);

  // Declared first: destroyed after the streams that use it.
  boost::asio::io_context m_io;
  std::optional<boost::beast::tcp_stream> m_plain;
  std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> m_tls;
  boost::beast::flat_buffer m_buffer;
  std::string m_peer;  // "host:port", for messages
  bool m_reusable = false;
  bool m_closed_before_answering = false;
  Clock::time_point m_idle_since{};
};

}  // namespace jitcache::daemon::remote::http
