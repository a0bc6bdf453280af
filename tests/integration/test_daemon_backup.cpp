// An online backup as docs/operations.md "Backup" tells operators to take one: `sqlite3 DB
// "VACUUM INTO 'copy'"` while jitcached serves. The daemon keeps serving during it, and a daemon
// started on the copy serves every entry byte-identical.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::TempDir;

namespace {

int run_sqlite3(const std::string& db, const std::string& sql) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execlp("sqlite3", "sqlite3", db.c_str(), sql.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("backup: VACUUM INTO while the daemon serves makes a copy a new daemon serves byte-identical") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  constexpr int k_entries = 40;
  {
    auto client = daemon.client();
    for (int i = 0; i < k_entries; ++i) {
      REQUIRE(client.put(testing::sample_put(i, testing::sample_image(i, 20'000 + i))));
    }
  }

  // Lookups and PUTs go on while the backup runs.
  std::atomic<bool> stop{false};
  std::atomic<int> served{0};
  std::atomic<int> failed{0};
  std::thread traffic([&] {
    auto client = daemon.client();
    for (int i = 0; !stop.load(); ++i) {
      auto hit = client.lookup(testing::sample_key(static_cast<std::uint64_t>(i % k_entries)));
      (hit && hit->has_value()) ? ++served : ++failed;
      const auto image = testing::sample_image(1000 + i, 3000);
      if (!client.put(testing::sample_put(1000 + i, image))) ++failed;
    }
  });
  const std::string copy = dir.file("backup.db");
  const int status = run_sqlite3(daemon.state_dir() + "/jitcache.db", "VACUUM INTO '" + copy + "'");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop = true;
  traffic.join();
  INFO("sqlite3 must be installed (scripts/install-deps installs it)");
  REQUIRE(status == 0);
  CHECK(served.load() > 0);
  CHECK(failed.load() == 0);
  REQUIRE(daemon.stop() == 0);

  // Restore: the copy becomes the database of a new state directory.
  TempDir restored_dir;
  DaemonProcess restored(restored_dir);
  std::filesystem::create_directories(restored.state_dir());
  std::filesystem::copy_file(copy, restored.state_dir() + "/jitcache.db");
  restored.start();
  auto client = restored.client();
  for (int i = 0; i < k_entries; ++i) {
    auto hit = client.lookup(testing::sample_key(static_cast<std::uint64_t>(i)));
    REQUIRE(hit);
    REQUIRE(hit->has_value());
    CHECK((*hit)->image == testing::sample_image(static_cast<std::uint64_t>(i), 20'000 + i));
  }
  REQUIRE(restored.stop() == 0);
}
