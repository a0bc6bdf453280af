// What a Redis Cluster says about where slots live, parsed without trusting it: the reply to
// CLUSTER SLOTS (which master serves which range of slots) and the MOVED and ASK redirections of
// the Cluster specification ("-MOVED 3999 127.0.0.1:6381"). A node written with an empty host
// ("" in CLUSTER SLOTS, ":6381" in a redirection) is on the host of the node that answered.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <common/result.hpp>
#include <daemon/remote/redis/redis_settings.hpp>

struct redisReply;

namespace jitcache::daemon::remote {

struct SlotRange {
  int first = 0;  // 0..16383, first <= last
  int last = 0;
  RedisNodeAddress master;
};

// The ranges of a CLUSTER SLOTS reply, with their masters (the first node of each); corrupt when
// the reply is not shaped as Redis documents it. A range whose master's address is unknown ("?")
// is left out: its slots are then served by no known node until a redirection names one.
common::Result<std::vector<SlotRange>> parse_cluster_slots(const redisReply& reply, std::string_view answering_host);

struct ClusterRedirect {
  enum class Kind : std::uint8_t { moved, ask };
  Kind kind = Kind::moved;
  int slot = 0;
  RedisNodeAddress target;
};

// The redirection an error reply's text is, or nullopt when it is none (or is malformed).
std::optional<ClusterRedirect> parse_cluster_redirect(std::string_view error_text, std::string_view answering_host);

// "host:port" as Redis writes a node in a redirection: the port after the last ':', the host before
// it (an IPv6 host is not bracketed there; brackets are accepted too). nullopt when malformed.
std::optional<RedisNodeAddress> parse_node_endpoint(std::string_view text, std::string_view answering_host);

}  // namespace jitcache::daemon::remote
