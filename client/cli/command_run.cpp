// `jitcache run [--socket S] [--quiet] -- PROGRAM ARGS...`: runs PROGRAM with libjitcache-preload.so
// first in LD_PRELOAD, so that every JIT the driver would do for it goes through the cache
// (docs/transparent.md). The program replaces this process (execvp), so its exit status, its
// signals, its pid and its terminal are its own; jitcache prints nothing once it runs.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/preload_environment.hpp>
#include <client/cli/preload_library.hpp>
#include <client/cli/run_command.hpp>

namespace jitcache::client::cli {

namespace {

// Rationale: the program may change its working directory before it connects; a socket named
// relative to where `jitcache run` was started must still be found.
std::string absolute_socket(const std::string& path) {
  std::error_code ec;
  const auto full = std::filesystem::absolute(path, ec);
  return ec ? path : full.string();
}

}  // namespace

ExitCode run_program(const RunOptions& options, const GlobalOptions& global) {
  const std::vector<std::string>& command = options.command;
  if (command.empty()) {
    return fail(ExitCode::usage, "run needs a program: jitcache run [--socket S] [--quiet] -- PROGRAM [ARGS...]");
  }
  if (global.json) return fail(ExitCode::usage, "--json does not apply to run: what the program prints is its own");

  auto library = find_preload_library();
  if (!library) return fail(ExitCode::run_failed, library.error().message);
  const char* current = std::getenv("LD_PRELOAD");
  const std::string preload = with_preload(current != nullptr ? current : "", *library);
  bool set = ::setenv("LD_PRELOAD", preload.c_str(), 1) == 0;
  const std::string& socket = options.socket_path.empty() ? global.socket_path : options.socket_path;
  if (!socket.empty()) set = set && ::setenv("JITCACHE_SOCKET", absolute_socket(socket).c_str(), 1) == 0;
  if (options.quiet) set = set && ::setenv("JITCACHE_QUIET", "1", 1) == 0;
  if (!set) return fail(ExitCode::run_failed, std::string("cannot set the environment: ") + std::strerror(errno));

  std::vector<std::string> arguments = command;
  std::vector<char*> argv;
  argv.reserve(arguments.size() + 1);
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::fflush(nullptr);
  ::execvp(argv[0], argv.data());

  // Only reached when the program could not be started; the codes are the shell's.
  const int error = errno;
  const std::string& program = command.front();
  const bool searched = program.find('/') == std::string::npos;
  if (error == ENOENT || error == ENOTDIR) {
    return fail(ExitCode::program_not_found, searched ? program + ": command not found (searched $PATH)"
                                                      : "cannot run " + program + ": " + std::strerror(error));
  }
  return fail(ExitCode::cannot_execute, "cannot run " + program + ": " + std::strerror(error));
}

Command add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  Command command;
  command.parser =
      app.add_subcommand("run",
                         "Run a program with libjitcache-preload.so, so that the JIT compiles it would do are cached");
  command.parser->add_option("--socket", options->socket_path,
                             "The daemon's socket, given to the program as JITCACHE_SOCKET (default: as it is)");
  command.parser->add_flag("--quiet", options->quiet, "No warning from jitcache in the program (JITCACHE_QUIET=1)");
  // Everything from the program's name on is the program's, `--` or not (`jitcache run -- prog
  // --socket x` gives --socket to prog): once a positional is seen, every word is one.
  command.parser->add_option("command", options->command, "The program to run, and its arguments");
  command.parser->positionals_at_end();
  command.parser->footer(
      "The program and its arguments follow `--`: jitcache run [--socket S] [--quiet] -- PROGRAM ARGS...");
  command.run = [options](const GlobalOptions& global) { return run_program(*options, global); };
  return command;
}

}  // namespace jitcache::client::cli
