// `jitcache remote check` and `jitcache remote status`: the daemon's fleet tier as REMOTE_CHECK
// reports it (PROTOCOL.md §5 REMOTE_CHECK). `check` has the daemon probe every remote now: reachable
// with its credentials, writable (where this host signs), able to hold leases; `status` asks what
// the daemon knows without a network call (each circuit breaker's state). Both show this host's
// signer and the trusted keys, and the signing self-test. Exit 7 (remote_failed) when a remote
// failed, so a deployment script or a monitoring check can act on it.
#include <iostream>
#include <memory>
#include <string>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/format.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/terminal_text.hpp>
#include <client/cli/text_table.hpp>

namespace jitcache::client::cli {

namespace {

using proto::ProbeAnswer;
using proto::RemoteCheckRemote;
using proto::RemoteCheckReply;

// What is wrong with one remote, or empty: a check needs it reachable, and writable where the host
// signs (it uploads there); a status needs its breaker closed.
std::string remote_problem(const RemoteCheckRemote& remote, bool probe, bool signs) {
  if (!probe) {
    if (remote.breaker == proto::BreakerState::closed) return "";
    return "circuit breaker " + std::string(proto::breaker_state_name(remote.breaker)) +
           " (its last calls failed: `jitcache remote check` probes it now)";
  }
  if (remote.reachable != ProbeAnswer::yes) return "not reachable";
  if (signs && remote.writable != ProbeAnswer::yes) return "not writable";
  return "";
}

// The first problem of the whole reply, as the one line a failed command prints; empty when none.
std::string first_problem(const RemoteCheckReply& reply, bool probe) {
  if (!reply.signing_message.empty()) return "the signing self-test failed: " + reply.signing_message;
  for (std::size_t i = 0; i < reply.remotes.size(); ++i) {
    const RemoteCheckRemote& remote = reply.remotes[i];
    const std::string problem = remote_problem(remote, probe, !reply.signer.empty());
    if (problem.empty()) continue;
    std::string line = "remote " + std::to_string(i) + " (" + remote.name + "): " + problem;
    if (!remote.message.empty()) line += ": " + remote.message;
    return line;
  }
  return "";
}

void print_human(const RemoteCheckReply& reply, bool probe) {
  if (reply.signer.empty()) {
    std::cout << "signer: none (no remote_signing_key: this host uploads nothing and takes no leases)\n";
  } else {
    std::cout << "signer: " << terminal_text(reply.signer) << " (self-test "
              << (reply.signing_message.empty() ? std::string("ok") : "FAILED: " + terminal_text(reply.signing_message))
              << ")\n";
  }
  std::cout << "trusted keys:";
  if (reply.trusted.empty()) std::cout << " none";
  for (std::size_t i = 0; i < reply.trusted.size(); ++i) {
    std::cout << (i == 0 ? " " : ", ") << terminal_text(reply.trusted[i]);
  }
  std::cout << "\n";
  TextTable table({{"#", Align::right},
                   {"remote", Align::left},
                   {"breaker", Align::left},
                   {"reachable", Align::left},
                   {"writable", Align::left},
                   {"leases", Align::left},
                   {"ping", Align::right},
                   {"message", Align::left}});
  for (std::size_t i = 0; i < reply.remotes.size(); ++i) {
    const RemoteCheckRemote& r = reply.remotes[i];
    table.add_row({std::to_string(i), r.name, std::string(proto::breaker_state_name(r.breaker)),
                   std::string(proto::probe_answer_name(r.reachable)),
                   std::string(proto::probe_answer_name(r.writable)), std::string(proto::lease_support_name(r.leases)),
                   r.latency_us == 0 ? std::string("-") : human_duration_us(r.latency_us), r.message});
  }
  table.print(std::cout);
  if (!probe) std::cout << "(not probed: `jitcache remote check` probes every remote now)\n";
}

Json to_json(const RemoteCheckReply& reply, bool probe, bool ok) {
  Json json;
  json["probed"] = probe;
  json["signer"] = reply.signer.empty() ? Json(nullptr) : Json(reply.signer);
  json["signing_self_test"] = reply.signer.empty()            ? Json(nullptr)
                              : reply.signing_message.empty() ? Json("ok")
                                                              : Json(reply.signing_message);
  json["trusted_keys"] = reply.trusted;
  Json remotes = Json::array();
  for (std::size_t i = 0; i < reply.remotes.size(); ++i) {
    const RemoteCheckRemote& r = reply.remotes[i];
    remotes.push_back(Json{{"index", i},
                           {"name", r.name},
                           {"breaker", proto::breaker_state_name(r.breaker)},
                           {"reachable", proto::probe_answer_name(r.reachable)},
                           {"writable", proto::probe_answer_name(r.writable)},
                           {"leases", proto::lease_support_name(r.leases)},
                           {"latency_us", r.latency_us},
                           {"message", r.message}});
  }
  json["remotes"] = std::move(remotes);
  json["ok"] = ok;
  return json;
}

ExitCode run_remote(const GlobalOptions& global, bool probe) {
  const std::string command = probe ? "jitcache remote check" : "jitcache remote status";
  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto hello = client->hello(command);
  if (!hello) return fail_daemon(hello.error());
  if ((hello->capabilities & proto::k_capability_remote_check) == 0) {
    return fail(ExitCode::daemon_failed, "this jitcached (" + hello->daemon_version +
                                             ") does not implement REMOTE_CHECK (it has no fleet tier)");
  }
  auto reply = client->remote_check(probe);
  if (!reply) {
    if (reply.error().reply_status == static_cast<std::uint16_t>(proto::Status::forbidden)) {
      return fail(ExitCode::daemon_failed, "jitcached refused the probe: " + reply.error().message +
                                               " (run it as root or as the daemon's user)");
    }
    return fail_daemon(reply.error());
  }
  // Rationale: without remotes there is nothing wrong with the daemon, but asking to check them is
  // a deployment that expected some: a script running `remote check` after setting up a host must
  // not pass on a host whose configuration lost its `remote` line.
  if (reply->remotes.empty()) {
    if (probe) return fail(ExitCode::remote_failed, "no remote configured: jitcached has no `remote` to check");
    if (global.json) {
      print_json(std::cout, to_json(*reply, probe, true));
    } else {
      std::cout << "no remote configured\n";
    }
    return ExitCode::ok;
  }
  const std::string problem = first_problem(*reply, probe);
  if (global.json) {
    print_json(std::cout, to_json(*reply, probe, problem.empty()));
  } else {
    print_human(*reply, probe);
  }
  if (!problem.empty()) return fail(ExitCode::remote_failed, problem);
  return ExitCode::ok;
}

}  // namespace

Command add_remote_command(CLI::App& app) {
  Command command;
  command.parser = app.add_subcommand("remote", "Show or check the daemon's fleet tier: its remotes and signing keys");
  command.parser->require_subcommand(1);
  command.parser->fallthrough();
  CLI::App* check = command.parser->add_subcommand(
      "check", "Probe every remote now: reachable, writable (where this host signs), leases; exit 7 on a failure");
  CLI::App* status = command.parser->add_subcommand(
      "status", "What the daemon knows of its remotes now, without probing them (circuit breakers, keys)");
  check->fallthrough();
  status->fallthrough();
  command.run = [check](const GlobalOptions& global) { return run_remote(global, check->parsed()); };
  return command;
}

}  // namespace jitcache::client::cli
