#include <client/cli/preload_environment.hpp>

#include <sys/stat.h>

namespace jitcache::client::cli {

namespace {

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

std::string with_preload(std::string_view current, const std::string& library) {
  std::string result = library;
  std::size_t start = 0;
  while (start <= current.size()) {
    std::size_t end = current.find_first_of(": ", start);
    if (end == std::string_view::npos) end = current.size();
    const std::string entry(current.substr(start, end - start));
    if (!entry.empty() && entry != library && !same_file(entry, library)) result += ":" + entry;
    start = end + 1;
  }
  return result;
}

}  // namespace jitcache::client::cli
