// Several real jitcached daemons that play the hosts of a fleet for integration tests: each with
// its own state dir and socket, all pointed at the same remote(s), builders with a signing key and
// consumers with only the builders' public key (docs/operations.md "A fleet"). Used by the tests
// and by bench_fleet, so it throws std::runtime_error rather than asserting.
// Thread safety: one owner; each host's client() is one connection.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <proto/compile_messages.hpp>
#include <proto/jit_options.hpp>
#include <proto/signing.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::testing {

// A key pair written where the daemons read it: keys/<name>.key (0600) and keys/<name>.pub.
struct FleetKeys {
  TempDir dir{"jitcache-fleet-keys"};
  std::string private_path;
  std::string public_path;

  explicit FleetKeys(const std::string& name = "builder") {
    const std::string prefix = dir.file(name);
    auto written = proto::SigningKey::generate().write_pair(prefix);
    if (!written) throw std::runtime_error("writing a key pair: " + written.error().message);
    private_path = prefix + ".key";
    public_path = prefix + ".pub";
  }
};

struct FleetHost {
  std::unique_ptr<TempDir> state;
  std::unique_ptr<DaemonProcess> daemon;
};

// `remote`: the remote list; `keys`: who signs (builder) or is trusted; extra: more arguments.
// `env`: more environment for the daemon (e.g. the fault worker's FAULT_WORKER_VERSION).
inline FleetHost start_fleet_host(const std::string& remote, const FleetKeys& keys, bool builder,
                                  std::vector<std::string> extra = {}, std::string log_level = "info",
                                  std::vector<std::pair<std::string, std::string>> env = {}) {
  FleetHost host;
  host.state = std::make_unique<TempDir>("jitcache-fleet-host");
  DaemonOptions options;
  options.log_level = std::move(log_level);
  options.extra_args = {"--remote", remote, "--remote-trusted-keys", keys.public_path};
  if (builder) {
    options.extra_args.push_back("--remote-signing-key");
    options.extra_args.push_back(keys.private_path);
  }
  for (auto& arg : extra) options.extra_args.push_back(std::move(arg));
  options.extra_env = std::move(env);
  host.daemon = std::make_unique<DaemonProcess>(*host.state, options);
  host.daemon->start();
  return host;
}

// A COMPILE of `ptx` (kept alive by the caller) for sm_90 on driver 13.0 / 580.159.04, default options.
inline proto::CompileRequest fleet_compile_request(const std::string& ptx) {
  proto::CompileRequest request;
  request.arch = "sm_90";
  request.driver_api = 13000;
  request.driver_build = "580.159.04";
  request.options = *proto::canonicalize_option_text("");
  request.ptx = proto::as_bytes(ptx);
  return request;
}

inline std::uint64_t host_stat(FleetHost& host, const std::string& name) {
  auto client = host.daemon->client();
  auto stats = client.stats();
  if (!stats) throw std::runtime_error("STATS: " + stats.error().message);
  for (const auto& [n, v] : stats->values) {
    if (n == name) return v;
  }
  throw std::runtime_error("no stat named " + name);
}

}  // namespace jitcache::testing
