// `jitcache run -- PROGRAM`, the real binary, as a shell runs it: the program replaces jitcache (its
// exit status, its signal and its parent are its own), LD_PRELOAD starts with the preload library
// exactly once, --socket and --quiet reach the program as JITCACHE_SOCKET and JITCACHE_QUIET, and
// jitcache's own failures are one line with the codes env(1) and the shells use (docs/cli.md "run").
// `jitcache` is the front (client/front/), which runs the plain forms by itself and hands every
// failure to the full CLI, jitcache-cli: both must say the same.
// Until the preload library is built here, a small shared library of the build stands in for it
// through JITCACHE_PRELOAD_LIBRARY: these tests are about the command, not the hooks.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::EnvChange;
using jitcache::testing::TempDir;

namespace {

namespace fs = std::filesystem;

// A real shared library of this build, preloadable into any program (it does nothing at load).
const std::string k_stand_in = fs::canonical(JITCACHE_TEST_SHARED_LIBRARY).string();

ChildResult run_jitcache(const std::vector<std::string>& args, std::vector<EnvChange> env = {},
                         const std::string& executable = jitcache::testing::cli_executable()) {
  std::vector<std::string> argv{executable};
  argv.insert(argv.end(), args.begin(), args.end());
  if (std::none_of(env.begin(), env.end(), [](const EnvChange& e) { return e.name == "JITCACHE_PRELOAD_LIBRARY"; })) {
    env.push_back({"JITCACHE_PRELOAD_LIBRARY", k_stand_in});
  }
  ChildResult result = jitcache::testing::run_child_captured(argv, env, std::chrono::seconds(30));
  INFO("stdout: " << result.output << "\nstderr: " << result.errors);
  REQUIRE(result.wait_status != -1);  // it finished within the deadline
  return result;
}

// The value of NAME in `env` output; "<unset>" when absent.
std::string variable(const std::string& env_output, const std::string& name) {
  const std::string prefix = name + "=";
  std::size_t at = 0;
  while (at < env_output.size()) {
    const std::size_t end = env_output.find('\n', at);
    const std::string line = env_output.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "<unset>";
}

// A copy of the front, `jitcache`, in `prefix`'s bin directory; its path.
std::string install_front(const TempDir& prefix) {
  fs::create_directories(prefix.file(JITCACHE_INSTALL_BINDIR));
  const std::string installed = prefix.file(JITCACHE_INSTALL_BINDIR "/jitcache");
  fs::copy_file(jitcache::testing::cli_executable(), installed);
  return installed;
}

// The error contract: nothing on stdout, one line on stderr starting "jitcache: ".
void check_one_line_error(const ChildResult& run) {
  INFO("stderr: " << run.errors);
  CHECK(run.output.empty());
  CHECK(run.errors.rfind("jitcache: ", 0) == 0);
  CHECK(run.errors.find('\n') == run.errors.size() - 1);
}

}  // namespace

TEST_CASE("cli run: the program's exit status is the run's, and the program is jitcache's own process") {
  const ChildResult exits = run_jitcache({"run", "--", "/bin/sh", "-c", "exit 7"});
  CHECK(WIFEXITED(exits.wait_status));
  CHECK(exits.status == 7);
  CHECK(exits.errors.empty());

  // exec, not fork and wait: the program's parent is whoever started jitcache.
  const ChildResult parent = run_jitcache({"run", "--", "/bin/sh", "-c", "echo $PPID"});
  CHECK(parent.status == 0);
  CHECK(parent.output == std::to_string(::getpid()) + "\n");
}

TEST_CASE("cli run: a program that dies of a signal is seen by the caller as dying of that signal") {
  const ChildResult killed = run_jitcache({"run", "--", "/bin/sh", "-c", "kill -TERM $$"});
  REQUIRE(WIFSIGNALED(killed.wait_status));
  CHECK(WTERMSIG(killed.wait_status) == SIGTERM);

  // And a shell around it sees what it sees of any program killed so: 128 + 15.
  const std::string cli = jitcache::testing::cli_executable();
  const ChildResult shell =
      jitcache::testing::run_child_captured({"/bin/sh", "-c",
                                             "'" + cli + "' run -- /bin/sh -c 'kill -TERM $$'; echo $?"},
                                            {{"JITCACHE_PRELOAD_LIBRARY", k_stand_in}}, std::chrono::seconds(30));
  CHECK(shell.output == "143\n");
}

TEST_CASE("cli run: arguments after the program are the program's, options and -- included") {
  const ChildResult run =
      run_jitcache({"run", "--", "/bin/sh", "-c", "printf '%s|' \"$@\"", "sh", "--socket", "x", "--quiet", "--", "-h"});
  CHECK(run.status == 0);
  CHECK(run.output == "--socket|x|--quiet|--|-h|");
  // Without `--` too: everything from the program's name on is the program's.
  const ChildResult bare = run_jitcache({"run", "/bin/sh", "-c", "printf '%s|' \"$@\"", "sh", "--help"});
  CHECK(bare.status == 0);
  CHECK(bare.output == "--help|");
}

TEST_CASE("cli run: LD_PRELOAD starts with the library, keeps what was there, and never holds it twice") {
  TempDir dir;
  const std::string link = dir.file("same-library.so");
  fs::create_symlink(k_stand_in, link);

  const ChildResult fresh = run_jitcache({"run", "--", "/usr/bin/env"}, {{"LD_PRELOAD", std::nullopt}});
  CHECK(fresh.status == 0);
  CHECK(variable(fresh.output, "LD_PRELOAD") == k_stand_in);

  // What was there stays, in its order; the library itself, by its path or another, is not repeated.
  const ChildResult kept =
      run_jitcache({"run", "--", "/usr/bin/env"}, {{"LD_PRELOAD", "libm.so.6 " + k_stand_in + "::" + link}});
  CHECK(kept.status == 0);
  CHECK(variable(kept.output, "LD_PRELOAD") == k_stand_in + ":libm.so.6");

  // Nested runs (a build tool under jitcache run starting another) preload it once.
  const std::string cli = jitcache::testing::cli_executable();
  const ChildResult nested =
      run_jitcache({"run", "--", cli, "run", "--", "/usr/bin/env"}, {{"LD_PRELOAD", std::nullopt}});
  CHECK(nested.status == 0);
  CHECK(variable(nested.output, "LD_PRELOAD") == k_stand_in);
}

TEST_CASE("cli run: --socket and --quiet reach the program, and without them its environment is the caller's") {
  const ChildResult plain = run_jitcache({"run", "--", "/usr/bin/env"},
                                         {{"JITCACHE_SOCKET", "/run/caller.sock"}, {"JITCACHE_QUIET", std::nullopt}});
  CHECK(plain.status == 0);
  CHECK(variable(plain.output, "JITCACHE_SOCKET") == "/run/caller.sock");
  CHECK(variable(plain.output, "JITCACHE_QUIET") == "<unset>");

  const ChildResult given = run_jitcache({"--socket", "/tmp/given.sock", "run", "--quiet", "--", "/usr/bin/env"},
                                         {{"JITCACHE_SOCKET", "/run/caller.sock"}});
  CHECK(given.status == 0);
  CHECK(variable(given.output, "JITCACHE_SOCKET") == "/tmp/given.sock");
  CHECK(variable(given.output, "JITCACHE_QUIET") == "1");

  // A relative socket is made absolute: the program may change its directory before it connects.
  const ChildResult after = run_jitcache({"run", "--socket", "relative.sock", "--", "/usr/bin/env"});
  CHECK(after.status == 0);
  CHECK(variable(after.output, "JITCACHE_SOCKET") == (fs::current_path() / "relative.sock").string());
}

TEST_CASE("cli run: a program that cannot be found exits 127 and one that cannot be executed 126, as in a shell") {
  const ChildResult missing = run_jitcache({"run", "--", "jitcache-no-such-program"});
  CHECK(missing.status == 127);
  check_one_line_error(missing);
  CHECK_THAT(missing.errors, Catch::Contains("jitcache-no-such-program: command not found"));

  const ChildResult missing_path = run_jitcache({"run", "--", "/nonexistent/program"});
  CHECK(missing_path.status == 127);
  check_one_line_error(missing_path);
  CHECK_THAT(missing_path.errors, Catch::Contains("/nonexistent/program: No such file or directory"));

  TempDir dir;
  const std::string data = dir.file("not-executable");
  jitcache::testing::write_file(data, "#!/bin/sh\nexit 0\n");
  ::chmod(data.c_str(), 0644);
  const ChildResult refused = run_jitcache({"run", "--", data});
  // root may execute a file without an execute bit only if some execute bit is set; none is.
  CHECK(refused.status == 126);
  check_one_line_error(refused);
  CHECK_THAT(refused.errors, Catch::Contains("Permission denied"));

  const ChildResult directory = run_jitcache({"run", "--", dir.path()});
  CHECK(directory.status == 126);
  check_one_line_error(directory);
}

TEST_CASE("cli run: no program, or --json, is a usage error (exit 2) and runs nothing") {
  const ChildResult none = run_jitcache({"run"});
  CHECK(none.status == 2);
  check_one_line_error(none);
  CHECK_THAT(none.errors, Catch::Contains("run needs a program"));
  const ChildResult only_dashes = run_jitcache({"run", "--"});
  CHECK(only_dashes.status == 2);
  const ChildResult json = run_jitcache({"--json", "run", "--", "/bin/sh", "-c", "echo ran"});
  CHECK(json.status == 2);
  check_one_line_error(json);
}

TEST_CASE("cli run: JITCACHE_PRELOAD_LIBRARY naming no usable file exits 125 with one line naming it") {
  const ChildResult missing =
      run_jitcache({"run", "--", "/bin/sh", "-c", "echo ran"}, {{"JITCACHE_PRELOAD_LIBRARY", "/nonexistent/lib.so"}});
  CHECK(missing.status == 125);
  check_one_line_error(missing);
  CHECK_THAT(missing.errors, Catch::Contains("JITCACHE_PRELOAD_LIBRARY=/nonexistent/lib.so cannot be preloaded: "
                                             "No such file or directory"));

  TempDir dir;
  const ChildResult directory =
      run_jitcache({"run", "--", "/bin/sh", "-c", "echo ran"}, {{"JITCACHE_PRELOAD_LIBRARY", dir.path()}});
  CHECK(directory.status == 125);
  CHECK_THAT(directory.errors, Catch::Contains("not a regular file"));

  // LD_PRELOAD splits at spaces and colons: such a path could never be preloaded as one entry.
  const std::string spaced = dir.file("with space.so");
  fs::copy_file(k_stand_in, spaced);
  const ChildResult space =
      run_jitcache({"run", "--", "/bin/sh", "-c", "echo ran"}, {{"JITCACHE_PRELOAD_LIBRARY", spaced}});
  CHECK(space.status == 125);
  CHECK_THAT(space.errors, Catch::Contains("space or a colon"));
}

TEST_CASE(
    "cli run: an installed jitcache finds the library in its prefix's library directory, or names where it looked") {
  TempDir prefix;
  const std::string installed = install_front(prefix);
  // The lookup that fails is the full CLI's (the front hands it every failure), from its own place.
  fs::create_directories(prefix.file(JITCACHE_INSTALL_LIBEXECDIR "/jitcache"));
  fs::copy_file(JITCACHE_FULL_CLI_PATH, prefix.file(JITCACHE_INSTALL_LIBEXECDIR "/jitcache/jitcache-cli"));
  const std::string library = prefix.file(JITCACHE_INSTALL_LIBDIR "/libjitcache-preload.so");

  const ChildResult absent =
      run_jitcache({"run", "--", "/bin/sh", "-c", "echo ran"}, {{"JITCACHE_PRELOAD_LIBRARY", std::nullopt}}, installed);
  CHECK(absent.status == 125);
  check_one_line_error(absent);
  CHECK_THAT(absent.errors,
             Catch::Contains("libjitcache-preload.so not found: tried " + library + " (No such file or directory)"));
  CHECK_THAT(absent.errors, Catch::Contains("JITCACHE_PRELOAD_LIBRARY"));
  // A copy outside the build tree never falls back to the tree's own library.
  CHECK(absent.errors.find(JITCACHE_BUILD_DIR) == std::string::npos);

  fs::create_directories(fs::path(library).parent_path());
  fs::copy_file(k_stand_in, library);
  const ChildResult found =
      run_jitcache({"run", "--", "/usr/bin/env"}, {{"JITCACHE_PRELOAD_LIBRARY", std::nullopt}}, installed);
  CHECK(found.status == 0);
  CHECK(variable(found.output, "LD_PRELOAD") == fs::path(library).lexically_normal().string());
  // preload-path is the full CLI's, which looks from <libexecdir>/jitcache: the same file.
  const ChildResult printed = run_jitcache({"preload-path"}, {{"JITCACHE_PRELOAD_LIBRARY", std::nullopt}}, installed);
  CHECK(printed.status == 0);
  CHECK(printed.output == fs::path(library).lexically_normal().string() + "\n");
}

TEST_CASE("cli run: the build tree's jitcache uses the library the tree built") {
#ifdef JITCACHE_PRELOAD_BUILD_FILE
  const ChildResult run = run_jitcache({"run", "--", "/usr/bin/env"}, {{"JITCACHE_PRELOAD_LIBRARY", std::nullopt}});
  CHECK(run.status == 0);
  CHECK(variable(run.output, "LD_PRELOAD").rfind(JITCACHE_PRELOAD_BUILD_FILE, 0) == 0);
#else
  // Not built yet: the one path tried is the installed location, and the message says so.
  const ChildResult run =
      run_jitcache({"run", "--", "/bin/sh", "-c", "echo ran"}, {{"JITCACHE_PRELOAD_LIBRARY", std::nullopt}});
  CHECK(run.status == 125);
  check_one_line_error(run);
  CHECK_THAT(run.errors, Catch::Contains("libjitcache-preload.so not found: tried "));
  JITCACHE_MARK_SKIPPED(
      "libjitcache-preload.so is not built in this tree: the build-tree lookup is checked for its message only");
#endif
}

TEST_CASE("cli preload-path: prints the library `run` preloads, and fails as run does when there is none") {
  const ChildResult named = run_jitcache({"preload-path"});
  CHECK(named.status == 0);
  CHECK(named.output == k_stand_in + "\n");
  const ChildResult json = run_jitcache({"--json", "preload-path"});
  CHECK(json.status == 0);
  CHECK_THAT(json.output, Catch::Contains("\"preload_library\": \"" + k_stand_in + "\""));
  const ChildResult missing = run_jitcache({"preload-path"}, {{"JITCACHE_PRELOAD_LIBRARY", "/nonexistent/lib.so"}});
  CHECK(missing.status == 125);
  check_one_line_error(missing);
}

// Rationale: `jitcache run` stands in front of every process of a job; the dynamic loader's work for
// libstdc++, libcrypto and the compressors cost each about 2 ms of CPU (docs/benchmarks.md
// "Start-up cost"). The front that runs it needs libc alone.
TEST_CASE("cli run: jitcache, the front that runs the program, depends on libc alone") {
  const ChildResult dynamic =
      jitcache::testing::run_child_captured({"/usr/bin/readelf", "-d", jitcache::testing::cli_executable()}, {},
                                            std::chrono::seconds(30));
  REQUIRE(dynamic.status == 0);
  std::vector<std::string> needed;
  for (std::size_t at = dynamic.output.find("(NEEDED)"); at != std::string::npos;
       at = dynamic.output.find("(NEEDED)", at + 1)) {
    const std::size_t open = dynamic.output.find('[', at);
    const std::size_t close = dynamic.output.find(']', open);
    needed.push_back(dynamic.output.substr(open + 1, close - open - 1));
  }
  CHECK(needed == std::vector<std::string>{"libc.so.6"});
}

TEST_CASE("cli run: the front runs the program by itself, and without jitcache-cli anything else fails in one line") {
  TempDir prefix;
  const std::string front = install_front(prefix);

  // No jitcache-cli anywhere near: a plain run still runs, with the environment run gives.
  const ChildResult ran = run_jitcache({"run", "--quiet", "--socket", "s.sock", "--", "/usr/bin/env"}, {}, front);
  CHECK(ran.status == 0);
  CHECK(variable(ran.output, "LD_PRELOAD") == k_stand_in);
  CHECK(variable(ran.output, "JITCACHE_QUIET") == "1");
  CHECK(variable(ran.output, "JITCACHE_SOCKET") == (fs::current_path() / "s.sock").string());

  // Everything else is jitcache-cli's: without it, exit 125 and one line naming where it looked.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"ping"}, {"--help"}, {"run", "--", "jitcache-no-such-program"}, {"run"}}) {
    const ChildResult refused = run_jitcache(args, {}, front);
    INFO(args.front());
    CHECK(refused.status == 125);
    check_one_line_error(refused);
    CHECK_THAT(refused.errors, Catch::Contains("cannot start the jitcache command-line tool (jitcache-cli): tried "));
    CHECK_THAT(refused.errors, Catch::Contains(JITCACHE_INSTALL_LIBEXECDIR "/jitcache/jitcache-cli (No such file"));
    CHECK_THAT(refused.errors,
               Catch::Contains(prefix.file(JITCACHE_INSTALL_BINDIR "/jitcache-cli") + " (No such file or directory)"));
  }
}

TEST_CASE("cli run: every failure of run is told by the front exactly as by jitcache-cli") {
  TempDir dir;
  const std::string data = dir.file("not-executable");
  jitcache::testing::write_file(data, "#!/bin/sh\nexit 0\n");
  ::chmod(data.c_str(), 0644);
  const std::vector<std::pair<std::vector<std::string>, std::vector<EnvChange>>> cases = {
      {{"run", "--", "jitcache-no-such-program"}, {}},
      {{"run", "--", "/nonexistent/program"}, {}},
      {{"run", "--", data}, {}},
      {{"run", "--", dir.path()}, {}},
      {{"run"}, {}},
      {{"--json", "run", "--", "/bin/true"}, {}},
      {{"run", "--", "/bin/true"}, {{"JITCACHE_PRELOAD_LIBRARY", "/nonexistent/lib.so"}}},
      {{"run", "--", "/bin/true"}, {{"JITCACHE_PRELOAD_LIBRARY", dir.path()}}},
  };
  for (const auto& [args, env] : cases) {
    INFO(args.back());
    const ChildResult front = run_jitcache(args, env);
    const ChildResult full = run_jitcache(args, env, JITCACHE_FULL_CLI_PATH);
    CHECK(front.status != 0);
    CHECK(front.status == full.status);
    CHECK(front.output == full.output);
    CHECK(front.errors == full.errors);
  }
}
