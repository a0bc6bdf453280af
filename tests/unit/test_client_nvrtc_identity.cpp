// The library digests of the NVRTC identity (client/src/nvrtc/nvrtc_identity.hpp): remembered
// across processes, never for a file that changed since.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <client/src/nvrtc/compile_lock.hpp>
#include <client/src/nvrtc/nvrtc_identity.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::client::nvrtc::file_digest;
using jitcache::client::nvrtc::private_directory;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;

namespace {

std::size_t remembered_files(const std::string& directory) {
  std::size_t n = 0;
  for (const auto& file : std::filesystem::directory_iterator(directory)) {
    if (file.path().filename().string().rfind("digest-", 0) == 0) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("nvrtc identity: a file's digest is remembered, and a change of the same size is seen") {
  TempDir dir;
  const std::string runtime = dir.file("runtime");
  std::filesystem::create_directories(runtime);
  std::filesystem::permissions(runtime, std::filesystem::perms::owner_all);
  ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
  const std::string library = dir.file("libnvrtc.so.13");
  write_file(library, "first library bytes");
  auto fresh = file_digest(library);
  REQUIRE(fresh);
  REQUIRE(private_directory() == runtime + "/jitcache-nvrtc");
  CHECK(remembered_files(private_directory()) == 0);  // changed just now: not trusted to its stamp yet
  std::this_thread::sleep_for(std::chrono::milliseconds(3100));
  auto first = file_digest(library);
  REQUIRE(first);
  CHECK(*first == *fresh);
  CHECK(remembered_files(private_directory()) == 1);
  CHECK(file_digest(library).value() == *first);

  // Same size, and the modification time set back: the change time still tells.
  const auto mtime = std::filesystem::last_write_time(library);
  write_file(library, "other library bytes");
  std::filesystem::last_write_time(library, mtime);
  auto changed = file_digest(library);
  REQUIRE(changed);
  CHECK(*changed != *first);
  CHECK(*changed == jitcache::proto::xxh3_128(jitcache::proto::as_bytes("other library bytes")));
  ::unsetenv("XDG_RUNTIME_DIR");
}

TEST_CASE("nvrtc identity: a runtime directory others may write is not used") {
  TempDir dir;
  const std::string runtime = dir.file("open");
  std::filesystem::create_directories(runtime + "/jitcache-nvrtc");
  std::filesystem::permissions(runtime + "/jitcache-nvrtc", std::filesystem::perms::all);
  ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
  CHECK(private_directory().empty());
  ::unsetenv("XDG_RUNTIME_DIR");
}

TEST_CASE(
    "nvrtc identity: in a process whose effective uid is another (set-user-ID), the real uid's runtime directory is "
    "not used") {
  if (::geteuid() != 0) return;  // needs root to take another real uid
  TempDir dir;
  const std::string runtime = dir.file("caller");
  std::filesystem::create_directories(runtime + "/jitcache-nvrtc");
  ::chmod((runtime + "/jitcache-nvrtc").c_str(), 0700);
  REQUIRE(::chown((runtime + "/jitcache-nvrtc").c_str(), 65534, 65534) == 0);
  // The caller's digests (and locks) there would be its lies: a digest planted for the program's
  // NVRTC under its stamp would key another NVRTC's results as this one's.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::setresuid(65534, 0, 0) != 0) ::_exit(2);
    ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
    ::_exit(private_directory().empty() ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
