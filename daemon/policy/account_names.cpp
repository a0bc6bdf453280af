#include <daemon/policy/account_names.hpp>

#include <grp.h>
#include <pwd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>

namespace jitcache::daemon::policy {

using common::ErrorCode;
using common::make_error;

namespace {

std::optional<unsigned long> as_number(const std::string& text) {
  unsigned long number = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, number);
  if (text.empty() || ec != std::errc() || p != end || number > 0xffffffffUL - 1) return std::nullopt;
  return number;
}

std::string lookup_failure(std::string_view what, const std::string& name, int rc) {
  return "unknown " + std::string(what) + " \"" + name + "\"" + (rc != 0 ? std::string(": ") + std::strerror(rc) : "");
}

}  // namespace

common::Result<gid_t> resolve_group(const std::string& name_or_id) {
  if (auto number = as_number(name_or_id)) return static_cast<gid_t>(*number);
  group entry{};
  group* found = nullptr;
  std::vector<char> buffer(16384);
  const int rc = ::getgrnam_r(name_or_id.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (rc != 0 || found == nullptr)
    return make_error(ErrorCode::invalid_argument, lookup_failure("group", name_or_id, rc));
  return found->gr_gid;
}

common::Result<uid_t> resolve_user(const std::string& name_or_id) {
  if (auto number = as_number(name_or_id)) return static_cast<uid_t>(*number);
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  const int rc = ::getpwnam_r(name_or_id.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (rc != 0 || found == nullptr)
    return make_error(ErrorCode::invalid_argument, lookup_failure("user", name_or_id, rc));
  return found->pw_uid;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) items.emplace_back(item);
  }
  return items;
}

common::Result<std::vector<uid_t>> resolve_users(std::string_view list) {
  std::vector<uid_t> out;
  for (const auto& name : split_list(list)) {
    JITCACHE_TRY_ASSIGN(const uid_t uid, resolve_user(name));
    out.push_back(uid);
  }
  return out;
}

common::Result<std::vector<gid_t>> resolve_groups(std::string_view list) {
  std::vector<gid_t> out;
  for (const auto& name : split_list(list)) {
    JITCACHE_TRY_ASSIGN(const gid_t gid, resolve_group(name));
    out.push_back(gid);
  }
  return out;
}

}  // namespace jitcache::daemon::policy
