// A fresh temp dir holding a store's database file, for tests that open SqliteStore directly.
// Removed with everything in it. Thread safety: one owner.
#pragma once

#include <filesystem>
#include <string>

#include <tests/support/temp_dir.hpp>

namespace jitcache::testing {

class StoreDir {
 public:
  explicit StoreDir(const std::string& tag = "jitcache-store-test") : m_dir(tag) {}
  std::filesystem::path path() const { return m_dir.path(); }
  std::filesystem::path db() const { return m_dir.file("store.db"); }

 private:
  TempDir m_dir;
};

}  // namespace jitcache::testing
