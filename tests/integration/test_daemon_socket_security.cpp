// The socket is reachable only by the daemon's user and the configured group, and the daemon will
// not listen in a directory someone else could write (docs/security.md "What is enforced",
// PROTOCOL.md §1).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <tests/support/daemon_process.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using jitcache::testing::DaemonProcess;
using jitcache::testing::TempDir;

namespace {

struct stat stat_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st;
}

// Runs jitcached in the foreground with its socket in `socket_dir` until it exits or `limit` passes.
DaemonProcess::RunResult run_with_socket_in(const TempDir& state, const std::string& socket_dir,
                                            const std::vector<std::string>& more = {},
                                            std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  DaemonProcess daemon(state);
  std::vector<std::string> args{"--foreground", "--socket", socket_dir + "/jitcached.sock", "--state-dir",
                                state.file("store")};
  args.insert(args.end(), more.begin(), more.end());
  return daemon.run_to_exit(args, limit);
}

}  // namespace

TEST_CASE("socket security: the socket is mode 0660 in a directory only the daemon can write") {
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  const struct stat socket = stat_of(daemon.socket_path());
  CHECK(S_ISSOCK(socket.st_mode));
  CHECK((socket.st_mode & 0777) == 0660);
  CHECK(socket.st_uid == ::geteuid());
  const struct stat directory = stat_of(state.path());
  CHECK((directory.st_mode & (S_IWGRP | S_IWOTH)) == 0);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("socket security: a directory the daemon creates for its socket is 0750") {
  TempDir state;
  const std::string socket_dir = state.file("run/jitcache");
  // The daemon serves until the time limit stops it; by then it has made the directory.
  auto run = run_with_socket_in(state, socket_dir, {}, std::chrono::milliseconds(1500));
  INFO(run.output);
  const struct stat directory = stat_of(socket_dir);
  CHECK((directory.st_mode & 0777) == 0750);
  CHECK(directory.st_uid == ::geteuid());
  CHECK(stat_of(socket_dir + "/jitcached.sock").st_uid == ::geteuid());
}

TEST_CASE("socket security: a world-writable socket directory is refused, saying why") {
  TempDir state;
  const std::string socket_dir = state.file("open");
  REQUIRE(::mkdir(socket_dir.c_str(), 0700) == 0);
  REQUIRE(::chmod(socket_dir.c_str(), 01777) == 0);
  auto run = run_with_socket_in(state, socket_dir);
  CHECK(run.status != 0);
  CHECK(run.status != -1);  // it exited by itself instead of serving
  CHECK_THAT(run.output, Catch::Contains("insecure socket directory") && Catch::Contains("writable by everyone") &&
                             Catch::Contains("1777"));
  struct stat st {};
  CHECK(::stat((socket_dir + "/jitcached.sock").c_str(), &st) != 0);  // never bound
}

TEST_CASE("socket security: a group-writable socket directory is refused") {
  TempDir state;
  const std::string socket_dir = state.file("group");
  REQUIRE(::mkdir(socket_dir.c_str(), 0700) == 0);
  REQUIRE(::chmod(socket_dir.c_str(), 0770) == 0);
  auto run = run_with_socket_in(state, socket_dir);
  CHECK(run.status > 0);
  CHECK_THAT(run.output, Catch::Contains("writable by its group"));
}

TEST_CASE("socket security: a socket directory owned by another user is refused") {
  if (::geteuid() != 0) {
    JITCACHE_SKIP("giving a directory to another uid needs root");
  }
  TempDir state;
  const std::string socket_dir = state.file("theirs");
  REQUIRE(::mkdir(socket_dir.c_str(), 0755) == 0);
  REQUIRE(::chown(socket_dir.c_str(), 65534, 65534) == 0);
  auto run = run_with_socket_in(state, socket_dir);
  CHECK(run.status > 0);
  CHECK_THAT(run.output, Catch::Contains("owned by uid 65534"));
}

TEST_CASE("socket security: socket_group gives the socket and its directory to that group") {
  gid_t group = 0;
  if (::geteuid() == 0) {
    group = 54321;  // root may give a file to any group number
  } else {
    gid_t groups[64];
    const int count = ::getgroups(64, groups);
    for (int i = 0; i < count; ++i) {
      if (groups[i] != ::getegid()) group = groups[i];
    }
    if (group == 0) {
      JITCACHE_SKIP("this user belongs to no second group to give the socket to");
    }
  }
  TempDir state;
  DaemonProcess daemon(state, {{"--socket-group", std::to_string(group)}, {}});
  daemon.start();
  CHECK(stat_of(daemon.socket_path()).st_gid == group);
  CHECK((stat_of(daemon.socket_path()).st_mode & 0777) == 0660);
  CHECK(stat_of(state.path()).st_gid == group);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("socket security: an unknown socket_group stops the start with its name") {
  TempDir state;
  auto run = run_with_socket_in(state, state.path(), {"--socket-group", "no-such-group-jitcache"});
  CHECK(run.status > 0);
  CHECK_THAT(run.output, Catch::Contains("unknown group") && Catch::Contains("no-such-group-jitcache"));
}
