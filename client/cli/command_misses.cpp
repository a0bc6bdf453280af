// `jitcache misses`: the daemon's recent misses (LOOKUPs and COMPILEs that found no entry) and
// evictions, newest first (MISSES, PROTOCOL.md §5). An untrusted caller sees its own misses and the
// evictions of the shared namespace and its own; root and the daemon's user see everything.
#include <iostream>
#include <memory>

#include <client/cli/commands.hpp>
#include <client/cli/explain_output.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/number_option.hpp>

namespace jitcache::client::cli {

namespace {

struct MissesOptions {
  std::uint64_t limit = 50;
};

ExitCode run_misses(const MissesOptions& options, const GlobalOptions& global) {
  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto hello = client->hello("jitcache misses");
  if (!hello) return fail_daemon(hello.error());
  if ((hello->capabilities & proto::k_capability_explain) == 0) {
    return fail(ExitCode::daemon_failed, "this jitcached (" + hello->daemon_version + ") keeps no record of misses");
  }
  auto reply = client->misses(static_cast<std::uint32_t>(options.limit));
  if (!reply) return fail_daemon(reply.error());
  if (global.json) print_json(std::cout, misses_to_json(*reply));
  else print_misses(std::cout, *reply);
  return ExitCode::ok;
}

}  // namespace

Command add_misses_command(CLI::App& app) {
  auto options = std::make_shared<MissesOptions>();
  Command command;
  command.parser = app.add_subcommand("misses", "List the daemon's recent misses and evictions, newest first");
  command.parser->add_option("--limit", options->limit, "At most N of each (1 to 256, default 50)")
      ->check(whole_number(1, proto::k_max_misses_listed));
  command.run = [options](const GlobalOptions& global) { return run_misses(*options, global); };
  return command;
}

}  // namespace jitcache::client::cli
