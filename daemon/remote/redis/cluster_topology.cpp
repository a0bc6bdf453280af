#include <daemon/remote/redis/cluster_topology.hpp>

#include <charconv>
#include <string>

#include <hiredis/hiredis.h>

#include <daemon/remote/redis/hash_slot.hpp>
#include <daemon/remote/redis/redis_reply.hpp>

namespace jitcache::daemon::remote {

namespace {

common::Error malformed(std::string_view why) {
  return common::make_error(common::ErrorCode::corrupt, "CLUSTER SLOTS: " + std::string(why));
}

bool is_slot(long long value) { return value >= 0 && value < k_hash_slot_count; }

bool is_endpoint_host(std::string_view host) {
  if (host.size() > 253) return false;
  for (const char c : host) {
    if (c <= ' ' || c > '~' || c == '/' || c == '@' || c == ',') return false;
  }
  return true;
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

common::Result<std::vector<SlotRange>> parse_cluster_slots(const redisReply& reply, std::string_view answering_host) {
  if (reply.type != REDIS_REPLY_ARRAY) return malformed("the reply is not an array");
  std::vector<SlotRange> ranges;
  for (std::size_t i = 0; i < reply.elements; ++i) {
    const redisReply* range = reply.element[i];
    if (range->type != REDIS_REPLY_ARRAY || range->elements < 3)
      return malformed("a range is not [first, last, master, ...]");
    const redisReply* first = range->element[0];
    const redisReply* last = range->element[1];
    const redisReply* master = range->element[2];
    if (first->type != REDIS_REPLY_INTEGER || last->type != REDIS_REPLY_INTEGER || !is_slot(first->integer) ||
        !is_slot(last->integer) || first->integer > last->integer) {
      return malformed("a range's slots are not 0 <= first <= last <= 16383");
    }
    if (master->type != REDIS_REPLY_ARRAY || master->elements < 2 || master->element[0]->type != REDIS_REPLY_STRING ||
        master->element[1]->type != REDIS_REPLY_INTEGER) {
      return malformed("a range's master is not [host, port, ...]");
    }
    const std::string_view host = reply_text(*master->element[0]);
    const long long port = master->element[1]->integer;
    if (host == "?") continue;  // Redis knows no address for it
    if (!is_endpoint_host(host) || port < 1 || port > 65535) return malformed("a master's host or port is not valid");
    ranges.push_back(SlotRange{static_cast<int>(first->integer), static_cast<int>(last->integer),
                               RedisNodeAddress{std::string(host.empty() ? answering_host : host),
                                                static_cast<std::uint16_t>(port)}});
  }
  return ranges;
}

std::optional<RedisNodeAddress> parse_node_endpoint(std::string_view text, std::string_view answering_host) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto port = parse_int(text.substr(colon + 1));
  if (!port || *port < 1 || *port > 65535) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (!is_endpoint_host(host)) return std::nullopt;
  return RedisNodeAddress{std::string(host.empty() ? answering_host : host), static_cast<std::uint16_t>(*port)};
}

std::optional<ClusterRedirect> parse_cluster_redirect(std::string_view error_text, std::string_view answering_host) {
  ClusterRedirect redirect;
  std::string_view rest;
  if (error_text.starts_with("MOVED ")) {
    redirect.kind = ClusterRedirect::Kind::moved;
    rest = error_text.substr(6);
  } else if (error_text.starts_with("ASK ")) {
    redirect.kind = ClusterRedirect::Kind::ask;
    rest = error_text.substr(4);
  } else {
    return std::nullopt;
  }
  const auto space = rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto slot = parse_int(rest.substr(0, space));
  if (!slot || !is_slot(*slot)) return std::nullopt;
  auto target = parse_node_endpoint(rest.substr(space + 1), answering_host);
  if (!target) return std::nullopt;
  redirect.slot = *slot;
  redirect.target = std::move(*target);
  return redirect;
}

}  // namespace jitcache::daemon::remote
