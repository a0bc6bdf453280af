#include <daemon/remote/redis/redis_key.hpp>

namespace jitcache::daemon::remote {

namespace {

bool is_space_name(std::string_view space) {
  if (space.empty() || space.size() > k_max_remote_space_length) return false;
  for (const char c : space) {
    if (c < 'a' || c > 'z') return false;
  }
  return true;
}

bool is_id(std::string_view id) {
  if (id.empty() || id.size() > k_max_remote_id_length) return false;
  for (const char c : id) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

}  // namespace

common::Result<std::string> redis_key_name(std::string_view prefix, RemoteKey key) {
  if (!is_space_name(key.space) || !is_id(key.id)) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "remote key: the space must be 1..16 of a-z and the id 1..128 of A-Z a-z 0-9 . _ -");
  }
  std::string name;
  name.reserve(prefix.size() + key.space.size() + key.id.size() + 3);
  name.append(prefix).append(key.space).append(":{").append(key.id).append("}");
  return name;
}

}  // namespace jitcache::daemon::remote
