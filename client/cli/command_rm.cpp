// `jitcache rm KEYID`: remove the entry a key id (or a prefix of at least 8 hex digits) names.
#include <iostream>
#include <memory>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/key_input.hpp>

namespace jitcache::client::cli {

namespace {

struct RmOptions {
  std::string key_id;
};

ExitCode run_rm(const RmOptions& options, const GlobalOptions& global) {
  auto prefix = parse_key_id_prefix(options.key_id);
  if (!prefix) return fail_local(prefix.error());
  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto removed = client->remove(*prefix);
  if (!removed) {
    if (removed.error().code == common::ErrorCode::not_found) {
      return fail(ExitCode::not_found, "no entry with key id " + *prefix + " (that you may remove)");
    }
    return fail_daemon(removed.error());
  }
  if (global.json) {
    Json json;
    json["key_id_prefix"] = *prefix;
    json["removed"] = removed->removed;
    print_json(std::cout, json);
  } else {
    std::cout << "removed " << removed->removed << (removed->removed == 1 ? " entry" : " entries") << '\n';
  }
  return ExitCode::ok;
}

}  // namespace

Command add_rm_command(CLI::App& app) {
  auto options = std::make_shared<RmOptions>();
  Command command;
  command.parser = app.add_subcommand("rm", "Remove the entry with this key id (8 to 64 hex digits)");
  command.parser->add_option("KEYID", options->key_id, "Key id or a prefix of at least 8 hex digits")->required();
  command.run = [options](const GlobalOptions& global) { return run_rm(*options, global); };
  return command;
}

}  // namespace jitcache::client::cli
