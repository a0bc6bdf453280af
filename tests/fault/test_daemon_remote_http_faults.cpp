// The HTTP remote (daemon/remote/http/) when the server fails: killed, stopped, silent, answering
// garbage, lying about a body's length, closing kept-alive connections, or busy beyond the pool.
// Every call must end by its deadline (plus the 200 ms a loaded machine may need to schedule it)
// with the error the tier counts (remote_backend.hpp "Errors"), and never crash.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <daemon/remote/http/http_backend.hpp>
#include <daemon/remote/http/http_settings.hpp>

#include <tests/support/nginx_server.hpp>
#include <tests/support/scripted_http_server.hpp>

using namespace jitcache;
using namespace std::chrono_literals;
using common::ErrorCode;
using daemon::remote::Clock;
using daemon::remote::Deadline;
using daemon::remote::RemoteBackend;
using daemon::remote::RemoteKey;
using daemon::remote::http::HttpSettings;
using testing::HttpBehaviour;
using testing::NginxServer;
using testing::ScriptedHttpServer;

namespace {

constexpr auto k_scheduling_slack = 200ms;

std::unique_ptr<RemoteBackend> backend_for(const std::string& url,
                                           const std::function<void(HttpSettings&)>& adjust = {}) {
  auto settings = daemon::remote::http::parse_http_url(url);
  REQUIRE(settings.ok());
  if (adjust) adjust(*settings);
  auto backend = daemon::remote::http::make_http_backend(std::move(*settings));
  REQUIRE(backend.ok());
  return std::move(*backend);
}

// Runs `call` with a deadline `budget` from now and checks that it failed with `expected` no later
// than the deadline plus the slack; returns the message.
template <class Call>
std::string fails_by_deadline(std::chrono::milliseconds budget, ErrorCode expected, Call&& call) {
  const auto started = Clock::now();
  const Deadline deadline = started + budget;
  const auto result = call(deadline);
  const auto finished = Clock::now();
  REQUIRE_FALSE(result.ok());
  INFO(result.error().message);
  CHECK(result.error().code == expected);
  CHECK(finished <= deadline + k_scheduling_slack);
  return result.error().message;
}

const RemoteKey k_key{"img", "00aa"};

}  // namespace

TEST_CASE("http faults: a killed server is unavailable at once, for fresh and for pooled connections") {
  NginxServer nginx;
  const auto backend = backend_for(nginx.url());
  REQUIRE(backend->put(k_key, "value", 0ms, Clock::now() + 5s).ok());  // leaves a kept-alive connection
  nginx.kill();
  // The pooled connection meets the closed socket and the call goes again on a new one: refused.
  fails_by_deadline(5s, ErrorCode::unavailable, [&](Deadline deadline) { return backend->get(k_key, 100, deadline); });
  const auto message =
      fails_by_deadline(5s, ErrorCode::unavailable, [&](Deadline deadline) { return backend->ping(deadline); });
  CHECK_THAT(message, Catch::Contains("cannot connect"));
  const auto started = Clock::now();
  CHECK(backend->exists(k_key, Clock::now() + 5s).error().code == ErrorCode::unavailable);
  CHECK(Clock::now() - started < 1s);
}

TEST_CASE("http faults: a stopped (SIGSTOP) server times out by the deadline, and serves again once resumed") {
  NginxServer nginx;
  const auto backend = backend_for(nginx.url());
  REQUIRE(backend->put(k_key, "value", 0ms, Clock::now() + 5s).ok());
  nginx.pause();
  // On the kept-alive connection, then on new ones: the kernel still accepts them for the stopped
  // process, which never answers.
  fails_by_deadline(500ms, ErrorCode::timeout, [&](Deadline deadline) { return backend->get(k_key, 100, deadline); });
  fails_by_deadline(300ms, ErrorCode::timeout, [&](Deadline deadline) { return backend->ping(deadline); });
  // (A PUT that timed out may still land once the server reads what the socket holds: another key.)
  fails_by_deadline(300ms, ErrorCode::timeout, [&](Deadline deadline) {
    return backend->put(RemoteKey{"img", "00bb"}, std::string(1 << 20, 'x'), 0ms, deadline);
  });
  nginx.resume();
  const auto value = backend->get(k_key, 100, Clock::now() + 5s);
  INFO((value.ok() ? "" : value.error().message));
  REQUIRE(value.ok());
  CHECK(*value == std::optional<std::string>("value"));
}

TEST_CASE("http faults: a server that never answers times out by the deadline") {
  ScriptedHttpServer server(HttpBehaviour::hang);
  const auto backend = backend_for(server.url());
  fails_by_deadline(300ms, ErrorCode::timeout, [&](Deadline deadline) { return backend->get(k_key, 100, deadline); });
  fails_by_deadline(300ms, ErrorCode::timeout, [&](Deadline deadline) { return backend->exists(k_key, deadline); });
  fails_by_deadline(1ms, ErrorCode::timeout, [&](Deadline deadline) { return backend->remove(k_key, deadline); });
}

TEST_CASE("http faults: a deadline already past fails with timeout without sending anything") {
  ScriptedHttpServer server(HttpBehaviour::store);
  const auto backend = backend_for(server.url());
  const auto result = backend->put(k_key, "value", 0ms, Clock::now() - 1ms);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().code == ErrorCode::timeout);
  CHECK(server.connections_accepted() == 0);
}

TEST_CASE("http faults: bytes that are not HTTP are corrupt, call after call, without a crash") {
  ScriptedHttpServer server(HttpBehaviour::garbage);
  const auto backend = backend_for(server.url());
  for (int i = 0; i < 3; ++i) {
    const auto message = fails_by_deadline(2s, ErrorCode::corrupt,
                                           [&](Deadline deadline) { return backend->get(k_key, 100, deadline); });
    CHECK_THAT(message, Catch::Contains("not HTTP"));
    fails_by_deadline(2s, ErrorCode::corrupt,
                      [&](Deadline deadline) { return backend->put(k_key, "v", 0ms, deadline); });
    fails_by_deadline(2s, ErrorCode::corrupt, [&](Deadline deadline) { return backend->ping(deadline); });
  }
  server.set_behaviour(HttpBehaviour::store);
  REQUIRE(backend->put(k_key, "v", 0ms, Clock::now() + 2s).ok());
  CHECK(backend->get(k_key, 100, Clock::now() + 2s).value() == std::optional<std::string>("v"));
}

TEST_CASE("http faults: a Content-Length that lies is corrupt when the server closes, timeout when it hangs") {
  ScriptedHttpServer server(HttpBehaviour::lying_length_then_close);
  const auto backend = backend_for(server.url());
  const auto message = fails_by_deadline(2s, ErrorCode::corrupt,
                                         [&](Deadline deadline) { return backend->get(k_key, 2'000'000, deadline); });
  CHECK_THAT(message, Catch::Contains("cut short"));
  server.set_behaviour(HttpBehaviour::lying_length_then_hang);
  fails_by_deadline(400ms, ErrorCode::timeout,
                    [&](Deadline deadline) { return backend->get(k_key, 2'000'000, deadline); });
}

TEST_CASE("http faults: a Content-Length over max_bytes is too_large at once, without waiting for the body") {
  // The body never comes (the server hangs after 10 bytes): a backend that read it would time out.
  ScriptedHttpServer server(HttpBehaviour::lying_length_then_hang);
  const auto backend = backend_for(server.url());
  const auto started = Clock::now();
  const auto result = backend->get(k_key, 1000, Clock::now() + 5s);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().code == ErrorCode::too_large);
  CHECK(Clock::now() - started < 1s);
}

TEST_CASE("http faults: a server closing each kept-alive connection after one answer costs a retry, not an error") {
  ScriptedHttpServer server(HttpBehaviour::store_then_close);
  const auto backend = backend_for(server.url());
  for (int i = 0; i < 20; ++i) {
    const auto put = backend->put(RemoteKey{"idx", "0" + std::to_string(i)}, "v", 0ms, Clock::now() + 2s);
    INFO(i << ": " << (put.ok() ? "" : put.error().message));
    REQUIRE(put.ok());
  }
  CHECK(server.requests_served() == 20);
  CHECK(server.connections_accepted() >= 20);
}

TEST_CASE("http faults: a server that closes without answering is an io error, not a hang") {
  ScriptedHttpServer server(HttpBehaviour::close_at_once);
  const auto backend = backend_for(server.url());
  const auto message =
      fails_by_deadline(2s, ErrorCode::io, [&](Deadline deadline) { return backend->get(k_key, 100, deadline); });
  CHECK_THAT(message, Catch::Contains("without answering"));
}

TEST_CASE("http faults: a call finding the pool's connections all busy times out by its deadline") {
  ScriptedHttpServer server(HttpBehaviour::hang);
  const auto backend = backend_for(server.url(), [](HttpSettings& settings) { settings.max_connections = 1; });
  std::thread holder([&] { (void)backend->get(k_key, 100, Clock::now() + 1500ms); });
  while (server.connections_accepted() == 0) std::this_thread::sleep_for(1ms);
  const auto message = fails_by_deadline(300ms, ErrorCode::timeout,
                                         [&](Deadline deadline) { return backend->get(k_key, 100, deadline); });
  CHECK_THAT(message, Catch::Contains("connections to the server stayed in use"));
  holder.join();
  CHECK(server.connections_accepted() == 1);
}

TEST_CASE("http faults: a connect that gets no answer (a full listen queue) times out by the deadline") {
  // A listener that never accepts, its queue filled: the kernel drops further SYNs, as a host behind
  // a firewall that drops them does.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener, 0) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    fillers.push_back(fd);
  }
  const auto backend = backend_for("http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/jc");
  const auto message =
      fails_by_deadline(400ms, ErrorCode::timeout, [&](Deadline deadline) { return backend->ping(deadline); });
  CHECK_THAT(message, Catch::Contains("connect"));
  for (const int fd : fillers) ::close(fd);
  ::close(listener);
}

TEST_CASE("http faults: a host name that does not resolve fails by the deadline, as unavailable or timeout") {
  const auto backend = backend_for("http://no-such-host.invalid/jc");
  const auto started = Clock::now();
  const auto result = backend->ping(started + 500ms);
  REQUIRE_FALSE(result.ok());
  INFO(result.error().message);
  CHECK((result.error().code == ErrorCode::unavailable || result.error().code == ErrorCode::timeout));
  CHECK(Clock::now() <= started + 500ms + k_scheduling_slack);
}
