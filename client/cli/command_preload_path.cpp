// `jitcache preload-path`: prints the absolute path of the libjitcache-preload.so that `jitcache run`
// preloads, found as `run` finds it (preload_library.hpp). For recipes that set LD_PRELOAD without
// `jitcache run` (a systemd unit, a container image): they ask the installed CLI instead of writing a
// path that depends on the distribution's library directory (docs/transparent.md).
#include <iostream>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/preload_library.hpp>

namespace jitcache::client::cli {

namespace {

ExitCode print_preload_path(const GlobalOptions& global) {
  auto library = find_preload_library();
  if (!library) return fail(ExitCode::run_failed, library.error().message);
  if (global.json) {
    print_json(std::cout, Json{{"preload_library", *library}});
  } else {
    std::cout << *library << '\n';
  }
  return ExitCode::ok;
}

}  // namespace

Command add_preload_path_command(CLI::App& app) {
  Command command;
  command.parser =
      app.add_subcommand("preload-path",
                         "Print the path of the libjitcache-preload.so that `jitcache run` preloads (for LD_PRELOAD)");
  command.run = print_preload_path;
  return command;
}

}  // namespace jitcache::client::cli
