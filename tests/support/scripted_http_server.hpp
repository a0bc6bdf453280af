// A small HTTP/1.1 server on a loopback port whose behaviour the test chooses: a well-behaved
// in-memory store (GET, HEAD, PUT, DELETE, keep-alive, and PUT with `If-None-Match: *` answered 412
// when the target exists, which nginx's dav module does not do: docs/remote-layout.md
// "Leases"; its bodies optionally chunked; optionally closing a kept-alive connection after each
// answer, as a server ending idle connections does), or one of the faults a remote server may show a client: bytes that
// are not HTTP, a response whose Content-Length promises more than it sends (then closing, or then hanging), no answer
// at all, or closing at once. It counts connections, so a test can check how many a client holds at once.
//
// Each connection is served by a thread of its own; the destructor stops and joins them all, so a
// hanging behaviour never outlives the test. Thread safety: every method may be called from any
// thread while clients are connected.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace jitcache::testing {

enum class HttpBehaviour {
  store,                    // a keep-alive store honouring If-None-Match: * on PUT
  store_chunked,            // the same, sending GET bodies with Transfer-Encoding: chunked
  store_then_close,         // the same, closing each connection after one answer (no Connection: close)
  garbage,                  // answers each request with bytes that are not an HTTP response
  lying_length_then_close,  // "200, Content-Length: 1000000", 10 bytes of body, then closes
  lying_length_then_hang,   // the same, then sends nothing more and keeps the connection open
  hang,                     // reads requests and never answers
  close_at_once,            // closes each connection as soon as it is accepted
};

class ScriptedHttpServer {
 public:
  explicit ScriptedHttpServer(HttpBehaviour behaviour = HttpBehaviour::store);  // throws when it cannot listen
  ~ScriptedHttpServer();
  ScriptedHttpServer(const ScriptedHttpServer&) = delete;
  ScriptedHttpServer& operator=(const ScriptedHttpServer&) = delete;

  std::uint16_t port() const { return m_port; }
  // "http://127.0.0.1:<port><prefix>"
  std::string url(const std::string& prefix = "/jc") const;

  // What later requests meet (connections already open included).
  void set_behaviour(HttpBehaviour behaviour) { m_behaviour.store(behaviour); }

  std::size_t connections_accepted() const { return m_accepted.load(); }
  std::size_t connections_open() const { return m_open.load(); }
  std::size_t most_connections_open() const { return m_most_open.load(); }
  std::size_t requests_served() const { return m_requests.load(); }

  // The store's value under a request target ("/jc/img/ab"), nullopt when none.
  std::optional<std::string> stored(const std::string& target) const;
  void store(const std::string& target, std::string value);

 private:
  void accept_loop();
  void serve(int fd);
  bool answer(int fd, std::string& pending);  // one request from `pending`; false: close

  int m_listener = -1;
  int m_stop_pipe[2] = {-1, -1};  // readable once the server stops: wakes every poll
  std::uint16_t m_port = 0;
  std::atomic<HttpBehaviour> m_behaviour;
  std::atomic<std::size_t> m_accepted{0};
  std::atomic<std::size_t> m_open{0};
  std::atomic<std::size_t> m_most_open{0};
  std::atomic<std::size_t> m_requests{0};

  mutable std::mutex m_mutex;
  std::map<std::string, std::string> m_values;
  std::vector<std::thread> m_connection_threads;
  std::thread m_accept_thread;
};

}  // namespace jitcache::testing
