// `jitcache`, the front (client/front/), against jitcache-cli, the full CLI it hands every command
// line but the plain `run` to: what a user or a script sees (standard output, standard error, exit
// status) is the same, whichever of the two was started.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::TempDir;

namespace {

ChildResult run_cli(const std::string& executable, const std::vector<std::string>& args) {
  std::vector<std::string> argv{executable};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildResult result = jitcache::testing::run_child_captured(argv, {}, std::chrono::seconds(30));
  REQUIRE(result.wait_status != -1);
  return result;
}

}  // namespace

TEST_CASE("cli front: every other command line reaches jitcache-cli unchanged, and its answer is the user's") {
  TempDir dir;
  const std::string socket = dir.file("nobody.sock");
  const std::vector<std::vector<std::string>> lines = {
      {},
      {"--help"},
      {"--version"},
      {"no-such-command", "--flag"},
      {"run", "--help"},
      {"ls", "--help"},
      {"remote"},
      {"preload-path"},
      {"--json", "preload-path"},
      {"--socket", socket, "ping"},
      {"ping", "--socket", socket, "--json"},
  };
  for (const auto& args : lines) {
    std::string shown;
    for (const auto& arg : args) shown += arg + " ";
    INFO("jitcache " << shown);
    const ChildResult front = run_cli(jitcache::testing::cli_executable(), args);
    const ChildResult full = run_cli(JITCACHE_FULL_CLI_PATH, args);
    INFO("front: " << front.status << "\n" << front.output << front.errors);
    CHECK(front.status == full.status);
    CHECK(front.output == full.output);
    CHECK(front.errors == full.errors);
  }
}
