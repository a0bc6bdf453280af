#include <client/cli/app.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/run_fast_path.hpp>

#ifndef JITCACHE_VERSION
#define JITCACHE_VERSION "unknown"
#endif

namespace jitcache::client::cli {

namespace {

std::string command_names(const std::vector<Command>& commands) {
  std::string names;
  for (const auto& command : commands) {
    if (!names.empty()) names += ", ";
    names += command.parser->get_name();
  }
  return names;
}

// CLI11 says "A subcommand is required" both for no command and for an unknown one; the words the
// user typed are still in remaining(), which lets the message name the culprit.
ExitCode fail_parse(const CLI::App& app, const CLI::ParseError& error, const std::vector<Command>& commands) {
  const bool no_command =
      std::none_of(commands.begin(), commands.end(), [](const Command& command) { return command.parser->parsed(); });
  if (no_command && dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    const auto remaining = app.remaining();
    if (!remaining.empty()) {
      return fail(ExitCode::usage,
                  "unknown command \"" + remaining.front() + "\" (commands: " + command_names(commands) + ")");
    }
    return fail(ExitCode::usage, "a command is required: " + command_names(commands) + " (see jitcache --help)");
  }
  // The same for a command made of commands (`jitcache remote check`).
  for (const Command& command : commands) {
    const auto subcommands = command.parser->get_subcommands([](const CLI::App*) { return true; });
    if (!command.parser->parsed() || subcommands.empty() ||
        dynamic_cast<const CLI::RequiredError*>(&error) == nullptr ||
        std::any_of(subcommands.begin(), subcommands.end(), [](const CLI::App* sub) { return sub->parsed(); })) {
      continue;
    }
    std::string names;
    for (const CLI::App* sub : subcommands) names += (names.empty() ? "" : ", ") + sub->get_name();
    const std::string name = "jitcache " + command.parser->get_name();
    const auto remaining = app.remaining();
    if (!remaining.empty()) {
      return fail(ExitCode::usage, "unknown command \"" + remaining.front() + "\" for " + name + " (" + names + ")");
    }
    return fail(ExitCode::usage, name + " needs a command: " + names + " (see " + name + " --help)");
  }
  return fail(ExitCode::usage, std::string(error.what()) + " (see jitcache --help)");
}

// Rationale: output that never reached standard output (a full disk, /dev/full, a broken pipe
// with SIGPIPE ignored) must not end in exit 0, or a script keeps a truncated listing as if it
// were whole. The output is buffered, so the check is the final flush.
// An output longer than stdio's buffer fails while it is printed, not at the flush: the errno that
// write left is then the one to report (a stream that failed does no more writes to replace it).
ExitCode check_standard_output(ExitCode code) {
  const bool failed_earlier = !std::cout.good() || std::ferror(stdout) != 0;
  const int earlier_error = errno;
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  if (std::cout.good() && flushed && std::ferror(stdout) == 0) return code;
  const int error = errno != 0 ? errno : (failed_earlier ? earlier_error : 0);
  if (code != ExitCode::ok) return code;  // already reported, with its own status
  return fail(ExitCode::local_io,
              "cannot write to standard output" + (error != 0 ? std::string(": ") + std::strerror(error) : ""));
}

ExitCode parse_and_run(int argc, char** argv) {
  CLI::App app{"Inspect and manage the jitcached JIT cache", "jitcache"};
  GlobalOptions global;
  app.add_option("--socket", global.socket_path,
                 "The daemon's socket (default: $JITCACHE_SOCKET, else the user or system socket)");
  app.add_flag("--json", global.json, "Print machine-readable JSON instead of text");
  app.set_version_flag("--version", JITCACHE_VERSION);
  app.require_subcommand(1);
  // Lets the global options also follow the command: `jitcache ls --json`.
  app.fallthrough();

  std::vector<Command> commands{add_ping_command(app),    add_stats_command(app),  add_ls_command(app),
                                add_put_command(app),     add_get_command(app),    add_rm_command(app),
                                add_warm_command(app),    add_gc_command(app),     add_verify_command(app),
                                add_run_command(app),     add_keygen_command(app), add_remote_command(app),
                                add_explain_command(app), add_misses_command(app), add_export_command(app),
                                add_import_command(app),  add_doctor_command(app), add_preload_path_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return static_cast<ExitCode>(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return static_cast<ExitCode>(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return static_cast<ExitCode>(app.exit(e));
  } catch (const CLI::ParseError& e) {
    return fail_parse(app, e, commands);
  }

  for (const auto& command : commands) {
    if (command.parser->parsed()) return check_standard_output(command.run(global));
  }
  return fail(ExitCode::usage, "a command is required: " + command_names(commands));
}

}  // namespace

int run_cli(int argc, char** argv) {
  try {
    if (const auto ran = run_without_parser(argc, argv)) return to_int(*ran);
    return to_int(parse_and_run(argc, argv));
  } catch (const std::bad_alloc&) {
    return to_int(fail(ExitCode::local_io, "out of memory"));
  } catch (const std::exception& e) {
    // Nothing in the commands is meant to throw; if something does, the user still gets one line
    // and a failure status rather than std::terminate's abort.
    return to_int(fail(ExitCode::local_io, std::string("unexpected error: ") + e.what()));
  }
}

}  // namespace jitcache::client::cli
