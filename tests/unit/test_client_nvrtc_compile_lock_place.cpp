// Single flight's lock directory (client/src/nvrtc/compile_lock.hpp) is used only when this uid
// owns it and nobody else may write it; one another uid made first (or left writable) turns single
// flight off, and the lock says so for the process report instead of keeping silent.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <client/src/nvrtc/compile_lock.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::client::nvrtc::CompileLock;
using jitcache::testing::TempDir;

TEST_CASE("nvrtc compile lock: a lock directory others may write gives no single flight, and the reason says so") {
  TempDir dir;
  const char* previous = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = previous != nullptr ? previous : "";
  ::setenv("XDG_RUNTIME_DIR", dir.path().c_str(), 1);
  std::filesystem::create_directories(dir.file("jitcache-nvrtc"));
  ::chmod(dir.file("jitcache-nvrtc").c_str(), 0777);
  {
    CompileLock lock("00ff", std::chrono::milliseconds(10));
    CHECK_FALSE(lock.held());
    CHECK_THAT(lock.unavailable(), Catch::Contains("no single flight") && Catch::Contains(dir.file("jitcache-nvrtc")));
  }
  ::chmod(dir.file("jitcache-nvrtc").c_str(), 0700);
  {
    CompileLock lock("00ff", std::chrono::milliseconds(10));
    CHECK(lock.held());
    CHECK(lock.unavailable().empty());
  }
  if (previous != nullptr) {
    ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_RUNTIME_DIR");
  }
}
