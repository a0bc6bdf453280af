#include <client/cli/preload_library.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace jitcache::client::cli {

namespace fs = std::filesystem;

namespace {

// Why `path` cannot be preloaded, or "" when it can.
std::string refusal(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return std::strerror(errno);
  if (path.find_first_of(": ") != std::string::npos) {
    return "its path holds a space or a colon, which separate LD_PRELOAD's entries";
  }
  return {};
}

std::string absolute(const std::string& path) {
  std::error_code ec;
  const fs::path full = fs::absolute(path, ec);
  return ec ? path : full.lexically_normal().string();
}

// The directory of the running jitcache, "" when /proc/self/exe cannot be read.
std::string own_directory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

common::Result<std::string> find_preload_library() {
  if (const char* named = std::getenv("JITCACHE_PRELOAD_LIBRARY"); named != nullptr && *named != '\0') {
    const std::string path = absolute(named);
    if (std::string why = refusal(path); !why.empty()) {
      return common::make_error(common::ErrorCode::io,
                                "JITCACHE_PRELOAD_LIBRARY=" + std::string(named) + " cannot be preloaded: " + why);
    }
    return path;
  }

  std::vector<std::string> candidates;
  const std::string directory = own_directory();
#ifdef JITCACHE_PRELOAD_FROM_EXEDIR
  if (!directory.empty()) candidates.push_back(absolute(directory + "/" + JITCACHE_PRELOAD_FROM_EXEDIR));
#endif
#if defined(JITCACHE_PRELOAD_BUILD_PATH) && defined(JITCACHE_CLI_BUILD_DIR)
  {
    std::error_code ec;
    if (!directory.empty() && fs::equivalent(directory, JITCACHE_CLI_BUILD_DIR, ec)) {
      candidates.emplace_back(JITCACHE_PRELOAD_BUILD_PATH);
    }
  }
#endif
  std::string tried;
  for (const std::string& candidate : candidates) {
    const std::string why = refusal(candidate);
    if (why.empty()) return candidate;
    if (!tried.empty()) tried += ", ";
    tried.append(candidate).append(" (").append(why).append(")");
  }
  if (tried.empty()) tried = "no installed location is known to this jitcache";
  return common::make_error(common::ErrorCode::not_found, "libjitcache-preload.so not found: tried " + tried +
                                                              "; set JITCACHE_PRELOAD_LIBRARY to its path");
}

}  // namespace jitcache::client::cli
