// `jitcache ls`: list entries, optionally filtered, paging through LIST with its cursor until the
// daemon says there is no more or --limit entries were collected.
#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/format.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/key_input.hpp>
#include <client/cli/number_option.hpp>
#include <client/cli/text_table.hpp>
#include <common/result.hpp>

namespace jitcache::client::cli {

namespace {

// The table shows this much of a key id: enough to pass to get/rm unambiguously in any realistic
// cache, short enough to leave room for the other columns.
constexpr std::size_t k_short_key_id_length = 16;
// Rationale: any count a signed 64-bit integer holds, far beyond what a store holds; above it a
// typo is more likely than a wish.
constexpr std::uint64_t k_max_ls_limit = std::numeric_limits<std::int64_t>::max();

struct LsOptions {
  std::string arch;
  std::string driver;
  std::string prefix;
  std::uint64_t limit = 0;  // 0: no limit (--limit itself is at least 1)
  bool stale = false;       // only entries of drivers no client has asked for within stale_driver_after
};

common::Result<proto::ListRequest> build_request(const LsOptions& options) {
  proto::ListRequest request;
  if (!options.arch.empty()) {
    if (auto arch = check_arch(options.arch); !arch) return arch.error();
    request.arch = options.arch;
  }
  if (!options.driver.empty()) {
    auto driver = parse_driver_filter(options.driver);
    JITCACHE_TRY(driver);
    request.driver_api = driver->api;
    request.driver_build = driver->build;
  }
  if (!options.prefix.empty()) {
    // LIST takes the same 8-digit minimum as LOOKUP and REMOVE (proto's codec enforces it).
    auto prefix = parse_key_id_prefix(options.prefix);
    JITCACHE_TRY(prefix);
    request.key_id_prefix = std::move(*prefix);
  }
  request.stale_only = options.stale;
  return request;
}

void print_table(const std::vector<proto::EntryInfo>& entries) {
  if (entries.empty()) {
    std::cout << "no entries\n";
    return;
  }
  TextTable table({{"KEY ID", Align::left},
                   {"ARCH", Align::left},
                   {"DRIVER", Align::left},
                   {"NAMESPACE", Align::left},
                   {"SIZE", Align::right},
                   {"HITS", Align::right},
                   {"LAST USED", Align::left},
                   {"STATE", Align::left},
                   {"PRODUCER", Align::left}});
  const std::int64_t now = now_unix_ms();
  for (const auto& entry : entries) {
    table.add_row({proto::to_hex(entry.key_id).substr(0, k_short_key_id_length), entry.key.arch,
                   std::to_string(entry.key.driver_api) + "/" + entry.key.driver_build,
                   namespace_name(entry.namespace_id), human_bytes(entry.raw_size), std::to_string(entry.hits),
                   human_age(entry.last_used_at_ms, now), entry.quarantined_at_ms != 0 ? "quarantined" : "live",
                   entry.producer});
  }
  table.print(std::cout);
}

ExitCode run_ls(const LsOptions& options, const GlobalOptions& global) {
  auto request = build_request(options);
  if (!request) return fail_local(request.error());
  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  if (options.stale) {
    // LIST's stale_only is behind the gc capability: an older daemon would refuse the whole request.
    auto hello = client->hello("jitcache ls");
    if (!hello) return fail_daemon(hello.error());
    if ((hello->capabilities & proto::k_capability_gc) == 0) {
      return fail(ExitCode::daemon_failed, "this jitcached (" + hello->daemon_version + ") cannot list stale entries");
    }
  }

  std::vector<proto::EntryInfo> entries;
  for (;;) {
    std::uint64_t wanted = proto::k_max_list_limit;
    if (options.limit != 0) wanted = std::min<std::uint64_t>(wanted, options.limit - entries.size());
    request->limit = static_cast<std::uint32_t>(wanted);
    auto page = client->list(*request);
    if (!page) return fail_daemon(page.error());
    for (auto& entry : page->entries) {
      if (options.limit != 0 && entries.size() == options.limit) break;
      entries.push_back(std::move(entry));
    }
    if (page->next_cursor.empty() || (options.limit != 0 && entries.size() >= options.limit)) break;
    // A daemon that hands back the cursor it was given would keep us here forever.
    if (page->next_cursor == request->cursor) {
      return fail(ExitCode::daemon_failed, "jitcached returned the same LIST cursor twice; stopping");
    }
    request->cursor = std::move(page->next_cursor);
  }

  if (global.json) {
    Json array = Json::array();
    for (const auto& entry : entries) array.push_back(entry_to_json(entry));
    print_json(std::cout, array);
  } else {
    print_table(entries);
  }
  return ExitCode::ok;
}

}  // namespace

Command add_ls_command(CLI::App& app) {
  auto options = std::make_shared<LsOptions>();
  Command command;
  command.parser = app.add_subcommand("ls", "List cache entries");
  command.parser->add_option("--arch", options->arch, "Only entries for this arch, e.g. sm_90");
  command.parser->add_option("--driver", options->driver,
                             "Only entries for this driver: API/BUILD, API alone (e.g. 13000) or BUILD alone");
  command.parser->add_option("--prefix", options->prefix, "Only key ids starting with these hex digits (8 to 64)");
  command.parser->add_flag("--stale", options->stale,
                           "Only entries of drivers no client has asked for within stale_driver_after "
                           "(what eviction removes first)");
  command.parser->add_option("--limit", options->limit, "Stop after N entries (at least 1)")
      ->check(whole_number(1, k_max_ls_limit));
  command.run = [options](const GlobalOptions& global) { return run_ls(*options, global); };
  return command;
}

}  // namespace jitcache::client::cli
