// What the bundle tests (tests/integration/test_daemon_bundles.cpp, test_daemon_bundle_tenants.cpp)
// share: a daemon started with extra arguments, the real CLI run against it, a signing key pair as
// `jitcache keygen` writes one, and the entries they put and look for. Header-only: the CLI's path
// and the key pair are all it needs beyond the support library. Thread safety: test-thread helpers.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <proto/signing.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::testing {

inline DaemonOptions daemon_with_args(std::vector<std::string> args) {
  DaemonOptions options;
  options.extra_args = std::move(args);
  return options;
}

// The real CLI (JITCACHE_CLI_PATH) against `daemon`'s socket, its output captured.
inline ChildResult run_cli(const DaemonProcess& daemon, const std::vector<std::string>& args,
                           std::chrono::seconds timeout) {
  std::vector<std::string> argv{JITCACHE_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_child_captured(argv, {{"JITCACHE_SOCKET", daemon.socket_path()}}, timeout);
}

// A key pair in `dir` (NAME.key, NAME.pub), as `jitcache keygen` writes one; returns the prefix.
inline std::string make_key_pair(const TempDir& dir, const std::string& name) {
  const std::string prefix = dir.file(name);
  REQUIRE(proto::SigningKey::generate().write_pair(prefix));
  return prefix;
}

// The image of the bundle tests' entry `seed`: of its own size, so that a mixed-up entry shows.
inline std::vector<std::uint8_t> bundle_test_image(std::uint64_t seed) { return sample_image(seed, 3000 + seed * 11); }

// PUTs the entries first .. first + count - 1 (bundle_test_image) through `daemon`'s socket.
inline void put_bundle_test_entries(DaemonProcess& daemon, std::uint64_t first, std::uint64_t count) {
  auto client = daemon.client();
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    const auto image = bundle_test_image(seed);
    REQUIRE(client.put(sample_put(seed, image)));
  }
}

}  // namespace jitcache::testing
