// `jitcache run` (command_run.cpp): the options it takes and the run itself, shared by its CLI11
// parser and by run_without_parser (run_fast_path.cpp).
// Thread safety: single-threaded, like the CLI.
#pragma once

#include <string>
#include <vector>

#include <client/cli/daemon_session.hpp>
#include <client/cli/exit_codes.hpp>

namespace jitcache::client::cli {

struct RunOptions {
  std::string socket_path;  // --socket after `run`; the global one is used when it is not given
  bool quiet = false;
  std::vector<std::string> command;  // the program and its arguments
};

// Execs the program with libjitcache-preload.so first in LD_PRELOAD; returns only when it cannot.
ExitCode run_program(const RunOptions& options, const GlobalOptions& global);

}  // namespace jitcache::client::cli
