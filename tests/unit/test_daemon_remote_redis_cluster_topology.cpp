// What a Redis Cluster says about its slots (daemon/remote/redis/cluster_topology.hpp), parsed from
// RESP bytes through hiredis's reader as a connection would get them: CLUSTER SLOTS of Redis 7
// (with node ids and hostnames), an empty host meaning the answering node's, an unknown endpoint
// left out, malformed replies refused as corrupt; MOVED and ASK with IPv4, IPv6 and empty hosts.
#include <catch2/catch.hpp>

#include <hiredis/hiredis.h>

#include <string>
#include <vector>

#include <daemon/remote/redis/cluster_topology.hpp>
#include <daemon/remote/redis/redis_reply.hpp>

using jitcache::common::ErrorCode;
using jitcache::daemon::remote::ClusterRedirect;
using jitcache::daemon::remote::parse_cluster_redirect;
using jitcache::daemon::remote::parse_cluster_slots;
using jitcache::daemon::remote::RedisNodeAddress;
using jitcache::daemon::remote::ReplyPtr;

namespace {

ReplyPtr reply_of(const std::string& resp) {
  redisReader* reader = redisReaderCreate();
  REQUIRE(redisReaderFeed(reader, resp.data(), resp.size()) == REDIS_OK);
  void* reply = nullptr;
  const int status = redisReaderGetReply(reader, &reply);
  redisReaderFree(reader);
  REQUIRE(status == REDIS_OK);
  REQUIRE(reply != nullptr);
  return ReplyPtr(static_cast<redisReply*>(reply));
}

std::string bulk(const std::string& text) { return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n"; }

// One range of Redis 7's CLUSTER SLOTS: [first, last, [host, port, id, {hostname}], replica...].
std::string range(int first, int last, const std::string& host, int port, bool replica = false) {
  std::string node =
      "*4\r\n" + bulk(host) + ":" + std::to_string(port) + "\r\n" + bulk(std::string(40, 'a')) + "*0\r\n";
  std::string text = "*" + std::to_string(replica ? 4 : 3) + "\r\n:" + std::to_string(first) +
                     "\r\n:" + std::to_string(last) + "\r\n" + node;
  if (replica) text += "*4\r\n" + bulk("10.9.9.9") + ":1\r\n" + bulk(std::string(40, 'b')) + "*0\r\n";
  return text;
}

}  // namespace

TEST_CASE("cluster topology: CLUSTER SLOTS gives each range's master, an empty host being the answering node's") {
  const auto reply = reply_of("*3\r\n" + range(0, 5460, "10.0.0.1", 7000, true) + range(5461, 10922, "", 7001) +
                              range(10923, 16383, "fd00::3", 7002));
  const auto ranges = parse_cluster_slots(*reply, "10.0.0.9");
  REQUIRE(ranges);
  REQUIRE(ranges->size() == 3);
  CHECK((*ranges)[0].first == 0);
  CHECK((*ranges)[0].last == 5460);
  CHECK((*ranges)[0].master == RedisNodeAddress{"10.0.0.1", 7000});
  CHECK((*ranges)[1].master == RedisNodeAddress{"10.0.0.9", 7001});
  CHECK((*ranges)[2].master == RedisNodeAddress{"fd00::3", 7002});
  CHECK((*ranges)[2].last == 16383);
}

TEST_CASE("cluster topology: a range whose master has no known address is left out") {
  const auto reply = reply_of("*2\r\n" + range(0, 99, "?", 7000) + range(100, 16383, "10.0.0.1", 7000));
  const auto ranges = parse_cluster_slots(*reply, "10.0.0.9");
  REQUIRE(ranges);
  REQUIRE(ranges->size() == 1);
  CHECK((*ranges)[0].first == 100);
}

TEST_CASE("cluster topology: a CLUSTER SLOTS reply of another shape is corrupt") {
  const std::string master = "*2\r\n" + bulk("10.0.0.1") + ":7000\r\n";
  const std::vector<std::string> malformed_replies{
      "+OK\r\n",
      "*1\r\n:1\r\n",                                                      // a range that is no array
      "*1\r\n*2\r\n:0\r\n:1\r\n",                                          // no master
      "*1\r\n*3\r\n:5\r\n:4\r\n" + master,                                 // first > last
      "*1\r\n*3\r\n:0\r\n:16384\r\n" + master,                             // past the last slot
      "*1\r\n*3\r\n:-1\r\n:4\r\n" + master,                                // before the first
      "*1\r\n*3\r\n" + bulk("0") + ":4\r\n" + master,                      // a slot as a string
      "*1\r\n*3\r\n:0\r\n:4\r\n*1\r\n" + bulk("10.0.0.1"),                 // a master without port
      "*1\r\n*3\r\n:0\r\n:4\r\n*2\r\n" + bulk("10.0.0.1") + ":0\r\n",      // port 0
      "*1\r\n*3\r\n:0\r\n:4\r\n*2\r\n" + bulk("10.0.0.1") + ":70000\r\n",  // port too large
      "*1\r\n*3\r\n:0\r\n:4\r\n*2\r\n" + bulk("a b") + ":7000\r\n",        // a host with a space
  };
  for (const auto& resp : malformed_replies) {
    INFO(resp);
    const auto ranges = parse_cluster_slots(*reply_of(resp), "10.0.0.9");
    REQUIRE_FALSE(ranges);
    CHECK(ranges.error().code == ErrorCode::corrupt);
  }
}

TEST_CASE(
    "cluster topology: MOVED and ASK name the slot and the node, IPv6 unbracketed, an empty host the answering node's") {
  auto moved = parse_cluster_redirect("MOVED 3999 127.0.0.1:6381", "10.0.0.9");
  REQUIRE(moved);
  CHECK(moved->kind == ClusterRedirect::Kind::moved);
  CHECK(moved->slot == 3999);
  CHECK(moved->target == RedisNodeAddress{"127.0.0.1", 6381});

  auto ask = parse_cluster_redirect("ASK 16383 fd00::1:7002", "10.0.0.9");
  REQUIRE(ask);
  CHECK(ask->kind == ClusterRedirect::Kind::ask);
  CHECK(ask->slot == 16383);
  CHECK(ask->target == RedisNodeAddress{"fd00::1", 7002});

  auto bracketed = parse_cluster_redirect("MOVED 0 [fd00::1]:7002", "10.0.0.9");
  REQUIRE(bracketed);
  CHECK(bracketed->target == RedisNodeAddress{"fd00::1", 7002});

  auto same_host = parse_cluster_redirect("MOVED 12 :7001", "10.0.0.9");
  REQUIRE(same_host);
  CHECK(same_host->target == RedisNodeAddress{"10.0.0.9", 7001});
}

TEST_CASE("cluster topology: other errors and malformed redirections are no redirection") {
  for (const char* text : {"ERR unknown command", "MOVED", "MOVED 3999", "MOVED x 127.0.0.1:1", "MOVED 16384 h:1",
                           "MOVED -1 h:1", "MOVED 1 h", "MOVED 1 h:0", "MOVED 1 h:99999", "ASK 1 h:x", "TRYAGAIN",
                           "CLUSTERDOWN The cluster is down", "moved 1 h:1"}) {
    INFO(text);
    CHECK_FALSE(parse_cluster_redirect(text, "10.0.0.9"));
  }
}
