// The subcommands of `jitcache` (docs/cli.md). Each add_*_command registers its parser and options
// on the app and returns how to run it once the command line has been parsed; app.cpp dispatches
// to the one the user chose. Output goes to std::cout, failures through fail() to std::cerr.
// Thread safety: single-threaded, like the CLI.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include <client/cli/daemon_session.hpp>
#include <client/cli/exit_codes.hpp>

namespace jitcache::client::cli {

struct Command {
  CLI::App* parser = nullptr;
  std::function<ExitCode(const GlobalOptions&)> run;
};

Command add_ping_command(CLI::App& app);     // command_ping.cpp
Command add_stats_command(CLI::App& app);    // command_stats.cpp
Command add_ls_command(CLI::App& app);       // command_ls.cpp
Command add_put_command(CLI::App& app);      // command_put.cpp
Command add_get_command(CLI::App& app);      // command_get.cpp
Command add_rm_command(CLI::App& app);       // command_rm.cpp
Command add_warm_command(CLI::App& app);     // command_warm.cpp
Command add_gc_command(CLI::App& app);       // command_gc.cpp
Command add_verify_command(CLI::App& app);   // command_verify.cpp
Command add_run_command(CLI::App& app);      // command_run.cpp
Command add_keygen_command(CLI::App& app);   // command_keygen.cpp
Command add_remote_command(CLI::App& app);   // command_remote.cpp: `remote check`, `remote status`
Command add_explain_command(CLI::App& app);  // command_explain.cpp
Command add_misses_command(CLI::App& app);   // command_misses.cpp
Command add_export_command(CLI::App& app);   // command_export.cpp
Command add_import_command(CLI::App& app);   // command_import.cpp
Command add_doctor_command(CLI::App& app);   // command_doctor.cpp

// command_preload_path.cpp
Command add_preload_path_command(CLI::App& app);

}  // namespace jitcache::client::cli
