// spdlog set-up for jitcached: stderr in the foreground (journald adds its own time stamps under
// systemd), a size-rotated file in the state dir when detached. Thread safety: call once at start-up.
#pragma once

#include <string>

namespace jitcache::daemon::startup {

void log_to_stderr(const std::string& level);
void log_to_file(const std::string& path, const std::string& level);

}  // namespace jitcache::daemon::startup
