// The Redis test servers other tests build on (tests/support/redis_server.hpp, redis_cluster.hpp,
// garbage_server.hpp), checked against what they promise: a standalone server with a password and
// an ACL user, paused (no answer), killed (refused) and started again on its port; a 3-master
// cluster that serves every slot and moves slots when resharded; a garbage server in each of its
// behaviours.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <tests/support/garbage_server.hpp>
#include <tests/support/redis_cluster.hpp>
#include <tests/support/redis_server.hpp>

using jitcache::testing::GarbageServer;
using jitcache::testing::RedisCluster;
using jitcache::testing::RedisServer;
using jitcache::testing::RedisServerOptions;

namespace {

struct RawReply {
  bool connected = false;
  std::string bytes;  // what came back before the timeout or the close
  bool closed = false;
};

// One client connection to 127.0.0.1:port, spoken to in raw bytes.
class RawClient {
 public:
  explicit RawClient(std::uint16_t port) : m_fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    m_connected = ::connect(m_fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawClient() { ::close(m_fd); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  // Sends `request` and collects the answer for `wait`, or until a line ends when `one_line`.
  RawReply ask(const std::string& request, std::chrono::milliseconds wait, bool one_line = false) {
    RawReply reply;
    reply.connected = m_connected;
    if (!m_connected) return reply;
    [[maybe_unused]] const auto sent = ::send(m_fd, request.data(), request.size(), MSG_NOSIGNAL);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      pollfd ready{m_fd, POLLIN, 0};
      if (left <= 0 || ::poll(&ready, 1, static_cast<int>(left)) != 1) break;
      char buffer[4096];
      const ssize_t got = ::recv(m_fd, buffer, sizeof(buffer), 0);
      if (got <= 0) {
        reply.closed = true;
        break;
      }
      reply.bytes.append(buffer, static_cast<std::size_t>(got));
      if (one_line && reply.bytes.find("\r\n") != std::string::npos) break;
    }
    return reply;
  }

 private:
  int m_fd;
  bool m_connected = false;
};

// `request` over a fresh connection; a PING's answer is one line.
RawReply exchange(std::uint16_t port, const std::string& request, std::chrono::milliseconds wait) {
  RawClient client(port);
  return client.ask(request, wait, request.rfind("PING", 0) == 0);
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

TEST_CASE(
    "redis test server: a standalone server serves on its port, then answers nothing paused, refuses killed, and serves again started") {
  RedisServer server;
  CHECK(server.port() != 0);
  CHECK(server.url() == "redis://127.0.0.1:" + std::to_string(server.port()));
  CHECK(trimmed(server.cli({"SET", "k", "v"})) == "OK");
  CHECK(trimmed(server.cli({"GET", "k"})) == "v");
  CHECK(exchange(server.port(), "PING\r\n", std::chrono::seconds(2)).bytes == "+PONG\r\n");

  server.pause();
  const auto paused = exchange(server.port(), "PING\r\n", std::chrono::milliseconds(300));
  CHECK(paused.connected);  // the kernel accepts for the stopped process
  CHECK(paused.bytes.empty());
  server.resume();
  CHECK(exchange(server.port(), "PING\r\n", std::chrono::seconds(2)).bytes == "+PONG\r\n");

  const auto port = server.port();
  server.kill();
  CHECK_FALSE(server.running());
  CHECK_FALSE(exchange(port, "PING\r\n", std::chrono::milliseconds(300)).connected);
  server.start();
  CHECK(server.port() == port);
  CHECK(exchange(port, "PING\r\n", std::chrono::seconds(2)).bytes == "+PONG\r\n");
  CHECK(trimmed(server.cli({"EXISTS", "k"})) == "0");  // persistence is off: it comes back empty
}

TEST_CASE("redis test server: requirepass and ACL users are configured as given") {
  RedisServerOptions options;
  options.password = "s3cret";
  options.acl_users = {"reader on >readpw ~jitcache:* +get +ping"};
  RedisServer server(options);
  CHECK(exchange(server.port(), "GET x\r\n", std::chrono::seconds(2)).bytes.rfind("-NOAUTH", 0) == 0);
  CHECK(trimmed(server.cli({"SET", "jitcache:a", "1"})) == "OK");
  const auto reader = exchange(server.port(), "AUTH reader readpw\r\nGET jitcache:a\r\nSET jitcache:a 2\r\n",
                               std::chrono::milliseconds(500));
  CHECK(reader.bytes.rfind("+OK\r\n$1\r\n1\r\n-NOPERM", 0) == 0);
}

TEST_CASE("redis test server: a 3-master cluster serves all slots, and reshard moves slots to another master") {
  RedisCluster cluster;
  REQUIRE(cluster.size() == 3);
  CHECK(cluster.url() == "redis+cluster://" + cluster.node(0).address() + "," + cluster.node(1).address() + "," +
                             cluster.node(2).address());
  CHECK(cluster.owner_of_slot(0) == 0);
  CHECK(cluster.owner_of_slot(8000) == 1);
  CHECK(cluster.owner_of_slot(16383) == 2);
  CHECK(cluster.node_id(0).size() == 40);
  CHECK(cluster.node(0).cli({"CLUSTER", "INFO"}).find("cluster_state:ok") != std::string::npos);

  cluster.reshard(0, 2, 100);
  cluster.wait_until_ok();
  CHECK(cluster.owner_of_slot(0) == 2);
  CHECK(cluster.owner_of_slot(99) == 2);
  CHECK(cluster.owner_of_slot(100) == 0);
}

TEST_CASE("garbage server: each behaviour answers as it says") {
  {
    GarbageServer garbage(GarbageServer::Behaviour::non_resp);
    const auto reply = exchange(garbage.port(), "PING\r\n", std::chrono::milliseconds(300));
    CHECK(reply.bytes.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(garbage.connections() == 1);
  }
  {
    GarbageServer garbage(GarbageServer::Behaviour::silent);
    const auto reply = exchange(garbage.port(), "PING\r\n", std::chrono::milliseconds(300));
    CHECK(reply.connected);
    CHECK(reply.bytes.empty());
    CHECK_FALSE(reply.closed);
  }
  {
    GarbageServer garbage(GarbageServer::Behaviour::close);
    const auto reply = exchange(garbage.port(), "PING\r\n", std::chrono::milliseconds(500));
    CHECK(reply.bytes.empty());
    CHECK(reply.closed);
  }
  {
    GarbageServer garbage(GarbageServer::Behaviour::scripted, {"$1000000000\r\nabc"});
    const auto reply = exchange(garbage.port(), "GET x\r\n", std::chrono::milliseconds(300));
    CHECK(reply.bytes == "$1000000000\r\nabc");
    CHECK_FALSE(reply.closed);
  }
  {
    GarbageServer garbage(GarbageServer::Behaviour::scripted, {"+first {port}\r\n", "+second\r\n"});
    RawClient client(garbage.port());
    CHECK(client.ask("a", std::chrono::milliseconds(300)).bytes == "+first " + std::to_string(garbage.port()) + "\r\n");
    CHECK(client.ask("b", std::chrono::milliseconds(300)).bytes == "+second\r\n");
    CHECK(client.ask("c", std::chrono::milliseconds(300)).bytes == "+second\r\n");
    CHECK(garbage.bytes_received() == 3);
  }
}
