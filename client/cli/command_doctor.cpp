// `jitcache doctor`: checks a set-up end to end, from the socket a program would use to the disk
// under the store, and says for each finding what is wrong and what to do about it (docs/cli.md
// "doctor"). The socket is the one libjitcache would pick in this environment (--socket,
// JITCACHE_SOCKET, the config file's `socket`, the default: loader/client_settings.hpp), so the
// answer is about the programs run from here, not only about this command. Checks that need the
// daemon run only when it could be reached through a socket the client trusts; the finding that
// stopped them says why. Exit status: 0 when every finding is ok, 8 with a warning, 9 with an error
// (exit_codes.hpp).
#include <iostream>

#include <client/cli/commands.hpp>
#include <client/cli/doctor_checks.hpp>
#include <client/cli/json_output.hpp>
#include <client/src/loader/client_settings.hpp>

namespace jitcache::client::cli {

namespace {

DoctorContext context_for(const GlobalOptions& global) {
  DoctorContext context;
  if (!global.socket_path.empty()) {
    context.socket_path = global.socket_path;
    context.socket_source = "--socket";
    context.trust = transport::DaemonTrust::from_environment();
    return context;
  }
  const loader::ClientSettings settings = loader::resolve_settings(nullptr);
  context.socket_path = settings.socket_path;
  context.socket_source = settings.socket_source;
  context.trust = settings.daemon_trust;
  if (const std::string cli = resolve_socket_path(global); cli != context.socket_path) context.other_commands_use = cli;
  return context;
}

ExitCode run_doctor(const GlobalOptions& global) {
  DoctorContext context = context_for(global);
  std::vector<Finding> findings;
  findings.push_back(check_socket(context));
  if (context.socket_exists) findings.push_back(check_socket_trust(context));
  if (context.socket_owner) findings.push_back(check_daemon(context));
  findings.push_back(check_library());
  findings.push_back(check_driver(context));
  if (context.hello) {
    findings.push_back(check_compile_worker(context));
    findings.push_back(check_published(context));
    findings.push_back(check_disk_space(context));
    findings.push_back(check_remote(context));
  }
  findings.push_back(check_preload());

  if (global.json) {
    print_json(std::cout, findings_to_json(findings));
  } else {
    print_findings(std::cout, findings);
  }
  return exit_code_for(worst_severity(findings));
}

}  // namespace

Command add_doctor_command(CLI::App& app) {
  Command command;
  command.parser = app.add_subcommand(
      "doctor",
      "Check the set-up end to end (socket, daemon, driver, compile worker, disk, remotes, preload) and say what to "
      "fix; exit 8 on a warning, 9 on an error");
  command.run = run_doctor;
  return command;
}

}  // namespace jitcache::client::cli
