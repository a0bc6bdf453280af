// `jitcache ping`: is the daemon there, which version is it, and how long does a round trip take.
// HELLO comes first so the version is known; the PING after it is what gets timed, so the figure
// is the cost of one request on an open connection, not of connecting.
#include <chrono>
#include <iostream>
#include <memory>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/format.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/terminal_text.hpp>

namespace jitcache::client::cli {

namespace {

constexpr const char* k_client_name = "jitcache-cli";

ExitCode run_ping(const GlobalOptions& global) {
  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto hello = client->hello(k_client_name);
  if (!hello) return fail_daemon(hello.error());

  const auto started = std::chrono::steady_clock::now();
  if (auto pong = client->ping(); !pong) return fail_daemon(pong.error());
  const auto round_trip_us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count());

  const std::string socket = resolve_socket_path(global);
  if (global.json) {
    Json json;
    json["socket"] = socket;
    json["daemon_version"] = hello->daemon_version;
    json["protocol_version"] = hello->version;
    json["capabilities"] = hello->capabilities;
    json["max_frame_bytes"] = hello->max_frame_bytes;
    json["round_trip_us"] = round_trip_us;
    print_json(std::cout, json);
  } else {
    // The daemon names itself in its version string ("jitcached 0.1.0"); add the name only if not.
    const std::string version = terminal_text(hello->daemon_version);
    std::cout << (version.starts_with("jitcached") ? version : "jitcached " + version) << " at "
              << terminal_text(socket) << ": protocol " << hello->version << ", round trip "
              << human_duration_us(round_trip_us) << '\n';
  }
  return ExitCode::ok;
}

}  // namespace

Command add_ping_command(CLI::App& app) {
  Command command;
  command.parser =
      app.add_subcommand("ping", "Check that jitcached answers; print its version and the round-trip time");
  command.run = run_ping;
  return command;
}

}  // namespace jitcache::client::cli
