// The Redis ACL lines of docs/operations.md "Redis and its ACLs", as tests run them: verbatim, so a
// line the docs get wrong fails a test. Throws std::runtime_error rather than asserting.
// Thread safety: pure functions (they read the docs and write files the caller names).
#pragma once

#include <sys/stat.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tests/support/temp_dir.hpp>

namespace jitcache::testing {

// The words of the line of docs/operations.md that starts with `start`, as an operator pastes it
// into redis-cli.
inline std::vector<std::string> documented_line(const std::string& start) {
  std::istringstream docs(read_file(std::string(JITCACHE_SOURCE_DIR) + "/docs/operations.md"));
  for (std::string line; std::getline(docs, line);) {
    if (line.rfind(start, 0) != 0) continue;
    std::istringstream words(line);
    std::vector<std::string> out;
    for (std::string word; words >> word;) out.push_back(word);
    return out;
  }
  throw std::runtime_error("docs/operations.md has no line starting with \"" + start + "\"");
}

// The password an ACL SETUSER line gives its user (its ">password" rule).
inline std::string acl_password(const std::vector<std::string>& words) {
  for (const auto& word : words) {
    if (word.size() > 1 && word[0] == '>') return word.substr(1);
  }
  throw std::runtime_error("the ACL line sets no password");
}

// `password` in a file of `dir` only its owner may read, as remote_password_file must be.
inline std::string password_file(const TempDir& dir, const std::string& name, const std::string& password) {
  const std::string path = dir.file(name);
  write_file(path, password + "\n");
  ::chmod(path.c_str(), 0600);
  return path;
}

}  // namespace jitcache::testing
