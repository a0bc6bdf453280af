// The published directory beside the socket (`<socket>.published`): made by the daemon at start,
// owned by it, mode 0750 with the socket's group, so that exactly the clients allowed to connect
// may read it and only the daemon may write it (docs/architecture.md "Published images").
//
// Whatever an earlier run left there is removed first: its files may name entries that have been
// removed, quarantined or replaced since, and nothing the daemon did not write in this run is
// trusted. Thread safety: called once at start-up.
#pragma once

#include <string>

#include <common/result.hpp>

#include <common/unique_fd.hpp>

namespace jitcache::daemon::publish {

// Removes `dir` (a directory, file or link of that name), creates it afresh with mode 0750 and the
// group of `socket_path`, and opens it. Errors name the step that failed (ErrorCode::io, no_space).
common::Result<common::UniqueFd> prepare_published_dir(const std::string& dir, const std::string& socket_path);

}  // namespace jitcache::daemon::publish
