// `jitcache gc`: run the daemon's eviction now (GC): the entries of stale drivers, then the least
// recently used while the store is over max_size. Root and the daemon's own user only.
#include <iostream>
#include <memory>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/format.hpp>
#include <client/cli/json_output.hpp>

namespace jitcache::client::cli {

namespace {

ExitCode run_gc(const GlobalOptions& global) {
  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto hello = client->hello("jitcache gc");
  if (!hello) return fail_daemon(hello.error());
  if ((hello->capabilities & proto::k_capability_gc) == 0) {
    return fail(ExitCode::daemon_failed, "this jitcached (" + hello->daemon_version + ") does not implement GC");
  }
  auto gc = client->gc();
  if (!gc) {
    if (gc.error().reply_status == static_cast<std::uint16_t>(proto::Status::forbidden)) {
      return fail(ExitCode::daemon_failed,
                  "jitcached refused GC: " + gc.error().message + " (run it as root or as the daemon's user)");
    }
    return fail_daemon(gc.error());
  }
  if (global.json) {
    Json json;
    json["evicted_entries"] = gc->evicted_entries;
    json["evicted_bytes"] = gc->evicted_bytes;
    json["stale_entries"] = gc->stale_entries;
    json["entries"] = gc->entries;
    json["bytes_stored"] = gc->bytes_stored;
    print_json(std::cout, json);
  } else {
    std::cout << "evicted " << gc->evicted_entries << (gc->evicted_entries == 1 ? " entry" : " entries") << " ("
              << human_bytes(gc->evicted_bytes) << "), " << gc->stale_entries << " of them for stale drivers\n"
              << "the store holds " << gc->entries << (gc->entries == 1 ? " entry" : " entries") << " ("
              << human_bytes(gc->bytes_stored) << ")\n";
  }
  return ExitCode::ok;
}

}  // namespace

Command add_gc_command(CLI::App& app) {
  Command command;
  command.parser = app.add_subcommand(
      "gc", "Evict now: entries of drivers no client asks for any more, then the least recently used over max_size");
  command.run = [](const GlobalOptions& global) { return run_gc(global); };
  return command;
}

}  // namespace jitcache::client::cli
