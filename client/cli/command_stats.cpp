// `jitcache stats`: every counter the daemon reports. Names are shown as the daemon sends them, so a
// newer daemon's counters appear without a CLI change; byte counters also get human units.
#include <iostream>
#include <string_view>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/format.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/text_table.hpp>

namespace jitcache::client::cli {

namespace {

// Counters measured in bytes follow the naming of PROTOCOL.md §5 STATS: "bytes_raw",
// "bytes_stored", or a "_bytes" suffix.
bool is_byte_counter(std::string_view name) {
  return name.starts_with("bytes") || name.ends_with("_bytes") || name.find(".bytes") != std::string_view::npos;
}

void print_human(const proto::StatsReply& stats) {
  TextTable table({{"", Align::left}, {"", Align::right}, {"", Align::left}});
  for (const auto& [name, value] : stats.values) {
    table.add_row({name, std::to_string(value), is_byte_counter(name) ? "(" + human_bytes(value) + ")" : ""});
  }
  table.print(std::cout);
}

ExitCode run_stats(const GlobalOptions& global) {
  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto stats = client->stats();
  if (!stats) return fail_daemon(stats.error());
  if (global.json) {
    print_json(std::cout, stats_to_json(*stats));
  } else {
    print_human(*stats);
  }
  return ExitCode::ok;
}

}  // namespace

Command add_stats_command(CLI::App& app) {
  Command command;
  command.parser =
      app.add_subcommand("stats", "Print the daemon's counters (entries, bytes, hits, misses, errors, ...)");
  command.run = run_stats;
  return command;
}

}  // namespace jitcache::client::cli
