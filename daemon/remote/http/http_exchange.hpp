// One HTTP request of the backend and what came back, as the connection sends and reads them
// (http_connection.hpp): the few shapes the backend needs, not a general HTTP message.
// Thread safety: plain values.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <boost/beast/http/verb.hpp>

namespace jitcache::daemon::remote::http {

struct HttpRequest {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string target;          // "/prefix/space/id", as sent on the request line
  std::string_view body;       // PUT: sent with Content-Length; the caller keeps it alive
  bool if_none_match = false;  // PUT: If-None-Match: *
  // A 200 answer's body is read (GET) and may be at most max_body bytes, else too_large; any other
  // answer's body is read only when it is small, to keep the connection.
  bool wants_body = false;
  std::size_t max_body = 0;
};

struct HttpResponse {
  unsigned status = 0;
  std::string body;  // a 200's body when the request wanted it; else empty
};

}  // namespace jitcache::daemon::remote::http
