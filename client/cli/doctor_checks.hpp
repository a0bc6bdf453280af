// The checks of `jitcache doctor` (docs/cli.md "doctor"), in the order they run: each looks at one
// part of a set-up and returns what it found (doctor_finding.hpp). They share a DoctorContext, in
// which the earlier checks leave what the later ones need (the socket's owner, the connection, the
// daemon's HELLO and STATS, the driver's API version); a check whose inputs are missing (no daemon
// to ask) is not run, and the finding that explains why stands for it.
// Thread safety: single-threaded, like the CLI.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <client/cli/doctor_finding.hpp>
#include <client/src/transport/daemon_client.hpp>
#include <client/src/transport/daemon_trust.hpp>
#include <proto/messages.hpp>

namespace jitcache::client::cli {

struct DoctorContext {
  std::string socket_path;
  std::string socket_source;       // "--socket", "JITCACHE_SOCKET", a config file's path, "default"
  std::string other_commands_use;  // the socket the other jitcache commands would use, when it differs
  transport::DaemonTrust trust = transport::DaemonTrust::callers_own();
  bool socket_exists = false;
  std::optional<uid_t> socket_owner;  // set when the socket's path passes the trust rule
  std::optional<transport::DaemonClient> client;
  std::optional<proto::HelloReply> hello;
  std::optional<std::map<std::string, std::uint64_t>> stats;
  int driver_api = 0;  // cuDriverGetVersion; 0: no driver

  // A STATS figure, when the daemon reported it.
  std::optional<std::uint64_t> figure(const std::string& name) const;
};

// doctor_socket_checks.cpp
Finding check_socket(DoctorContext& context);        // found, a socket, its owner and mode
Finding check_socket_trust(DoctorContext& context);  // would the client use it (daemon_trust.hpp)
Finding check_daemon(DoctorContext& context);        // connect, HELLO, STATS
Finding check_published(const DoctorContext& context);

// doctor_local_checks.cpp
Finding check_library();
Finding check_driver(DoctorContext& context);
Finding check_preload();

// doctor_daemon_checks.cpp
Finding check_compile_worker(const DoctorContext& context);
Finding check_disk_space(const DoctorContext& context);
Finding check_remote(DoctorContext& context);

}  // namespace jitcache::client::cli
