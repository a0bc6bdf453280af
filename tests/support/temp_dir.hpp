// A fresh directory under $TMPDIR (or /tmp) removed with everything in it when the object dies.
// Thread safety: one object per owner.
#pragma once

#include <string>

namespace jitcache::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "jitcache-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return m_path; }
  std::string file(const std::string& name) const { return m_path + "/" + name; }

 private:
  std::string m_path;
};

// Whole-file helpers for tests.
std::string read_file(const std::string& path);
// Makes the missing directories above `path` first.
void write_file(const std::string& path, const std::string& bytes);

}  // namespace jitcache::testing
