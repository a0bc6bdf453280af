// Users and groups named in the configuration (socket_group, trusted_users, trusted_groups), by
// name or number, resolved once at start so that a typo stops the daemon with a clear error instead
// of silently trusting no one. Thread safety: free functions (getpwnam_r/getgrnam_r).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>

namespace jitcache::daemon::policy {

// "jitcache" or "1234". A number needs no entry in the group or user database (a container's ids).
common::Result<gid_t> resolve_group(const std::string& name_or_id);
common::Result<uid_t> resolve_user(const std::string& name_or_id);

// A configuration list ("alice, bob,1002"): the items, trimmed; empty items are skipped.
std::vector<std::string> split_list(std::string_view text);

common::Result<std::vector<uid_t>> resolve_users(std::string_view list);
common::Result<std::vector<gid_t>> resolve_groups(std::string_view list);

}  // namespace jitcache::daemon::policy
