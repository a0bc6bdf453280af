// Runs a program as a child process and collects its standard output, for tests and benchmarks
// whose subject is "a fresh process": a second client of the cache, a load timed in a process of
// its own. The child's stderr is the caller's. Thread safety: free functions; each call waits for
// its own child.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace jitcache::testing {

// A variable to set in the child (value) or to remove from its environment (nullopt).
struct EnvChange {
  std::string name;
  std::optional<std::string> value;
};

struct ChildResult {
  int status = -1;       // the exit status, 128 + signal when killed, -1 when it ran past the timeout
  std::string output;    // everything it wrote to stdout
  int wait_status = -1;  // as waitpid(2) gave it (WIFSIGNALED tells a signal from an exit 128+n)
  std::string errors;    // everything it wrote to stderr, when captured (run_child_captured)
};

// Runs argv[0] (a path) with argv and the caller's environment changed by `env`; throws only when
// it cannot fork. After `timeout` the child is killed with SIGKILL.
ChildResult run_child(const std::vector<std::string>& argv, const std::vector<EnvChange>& env,
                      std::chrono::milliseconds timeout);

// As run_child, with the child's stderr collected into `errors` as well.
ChildResult run_child_captured(const std::vector<std::string>& argv, const std::vector<EnvChange>& env,
                               std::chrono::milliseconds timeout);

// The running program's own executable (/proc/self/exe), to start a copy of it in another mode.
std::string self_executable();

}  // namespace jitcache::testing
