// `jitcache verify`: the daemon's full check of its store (VERIFY): SQLite's integrity_check, then
// every stored image decoded and checked against its checksum, the bad ones removed. Exit 6
// (damage_found) when either found something, so a cron job or a monitoring check can alert on it.
// Root and the daemon's own user only.
#include <chrono>
#include <iostream>
#include <memory>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/format.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/number_option.hpp>
#include <client/cli/terminal_text.hpp>

namespace jitcache::client::cli {

namespace {

// Rationale: an hour. VERIFY reads every image once (a few hundred MB/s on one core with zstd), so
// even a store of 100 GB finishes well within it, while a daemon that stopped answering is still
// noticed eventually; --timeout changes it.
constexpr int k_default_timeout_s = 3600;
// A week: past it, a daemon that has not answered will not.
constexpr int k_max_timeout_s = 7 * 24 * 3600;

ExitCode run_verify(const GlobalOptions& global, int timeout_s) {
  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto hello = client->hello("jitcache verify");
  if (!hello) return fail_daemon(hello.error());
  if ((hello->capabilities & proto::k_capability_verify) == 0) {
    return fail(ExitCode::daemon_failed, "this jitcached (" + hello->daemon_version + ") does not implement VERIFY");
  }
  auto verify = client->verify(std::chrono::seconds(timeout_s));
  if (!verify) {
    if (verify.error().reply_status == static_cast<std::uint16_t>(proto::Status::forbidden)) {
      return fail(ExitCode::daemon_failed,
                  "jitcached refused VERIFY: " + verify.error().message + " (run it as root or as the daemon's user)");
    }
    return fail_daemon(verify.error());
  }
  const bool damaged = verify->integrity != "ok" || verify->entries_removed > 0;
  if (global.json) {
    Json json;
    json["integrity_check"] = verify->integrity;
    json["entries_checked"] = verify->entries_checked;
    json["entries_removed"] = verify->entries_removed;
    Json removed = Json::array();
    for (const auto& entry : verify->removed) {
      removed.push_back(Json{{"key_id", proto::to_hex(entry.key_id)}, {"namespace", entry.namespace_id}});
    }
    json["removed"] = std::move(removed);
    json["removed_listed_all"] = verify->removed.size() == verify->entries_removed;
    json["duration_ms"] = verify->duration_ms;
    json["damage_found"] = damaged;
    print_json(std::cout, json);
  } else {
    std::cout << "integrity_check: " << terminal_text(verify->integrity) << "\n"
              << "checked " << verify->entries_checked << (verify->entries_checked == 1 ? " entry" : " entries")
              << " in " << verify->duration_ms << " ms; removed " << verify->entries_removed << " damaged\n";
    for (const auto& entry : verify->removed) {
      std::cout << "  removed " << proto::to_hex(entry.key_id) << " (namespace " << entry.namespace_id << ")\n";
    }
    if (verify->removed.size() < verify->entries_removed) {
      std::cout << "  ... and " << verify->entries_removed - verify->removed.size()
                << " more (the daemon's log names each)\n";
    }
    if (verify->integrity != "ok") {
      std::cout << "the database itself is damaged: see docs/operations.md \"Corruption\" (restarting jitcached "
                   "sets it aside if quick_check fails too)\n";
    }
  }
  return damaged ? ExitCode::damage_found : ExitCode::ok;
}

}  // namespace

Command add_verify_command(CLI::App& app) {
  Command command;
  command.parser = app.add_subcommand(
      "verify",
      "Check the whole store now: SQLite's integrity_check and every image's checksum; damaged entries are removed");
  auto timeout_s = std::make_shared<int>(k_default_timeout_s);
  command.parser->add_option("--timeout", *timeout_s, "Seconds to wait for the daemon's answer")
      ->check(whole_number(1, k_max_timeout_s))
      ->capture_default_str();
  command.run = [timeout_s](const GlobalOptions& global) { return run_verify(global, *timeout_s); };
  return command;
}

}  // namespace jitcache::client::cli
