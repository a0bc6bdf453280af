// Builds the fleet tier from the configuration (docs/operations.md "A fleet"): the remotes from
// `remote` (with remote_password_file and remote_ca_file), this host's signing key and the trusted
// keys, the tiered store in front of the local one, fleet single flight for the compile service and,
// with remote_verify_sample, the sampled re-verification. A URL or key file that is wrong stops the
// start with the reason; a remote that does not answer does not (it is logged, and its breaker
// keeps it from costing the loads anything).
// Thread safety: built once at start-up on the main thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <daemon/config/config.hpp>
#include <daemon/remote/ask_desk.hpp>
#include <daemon/remote/fleet_gate.hpp>
#include <daemon/remote/healer.hpp>
#include <daemon/remote/remote_tier.hpp>
#include <daemon/remote/tiered_store.hpp>
#include <daemon/remote/verify_sampler.hpp>
#include <daemon/startup/compile_setup.hpp>
#include <daemon/store/entry_transfer.hpp>
#include <daemon/store/store.hpp>
#include <daemon/store/tenancy.hpp>

namespace jitcache::daemon::startup {

// Owns the parts in the order they must go: the sampler and the gate (which use the tier and the
// store) before the store, the store before the tier; the ask desk after the gate that posts to it.
struct Fleet {
  std::unique_ptr<remote::RemoteTier> tier;
  std::unique_ptr<remote::TieredStore> store;
  std::unique_ptr<remote::FleetGate> gate;
  std::unique_ptr<remote::VerifySampler> sampler;
  std::unique_ptr<remote::Healer> healer;  // the remote heals (remote_heal_rate)
  std::unique_ptr<remote::AskDesk> asks;   // consumers' compile asks (before the gate that posts them)

  Fleet() = default;
  Fleet(Fleet&&) = default;
  ~Fleet();
};

// The pieces of a comma-separated list (remote_trusted_keys), trimmed, empty ones left out.
std::vector<std::string> split_commas(const std::string& text);
// This host's name, printable, at most 64 bytes: what the fleet's records and bundles name it by.
std::string host_name();

// The `remote` list's URLs. Commas separate URLs, and also a redis+cluster:// URL's seeds: a
// piece without "://" belongs to the URL before it.
common::Result<std::vector<std::string>> split_remote_urls(const std::string& text);

// The first line of `remote_password_file`; refused when every user may read it, and a file the
// daemon may not open is named with the reason and the daemon's uid (docs/operations.md "A fleet").
common::Result<std::string> read_remote_password(const std::string& path);

// Null when `remote` is empty.
// `removals`: the local store's record of the keys an operator removed, which no remote brings back.
common::Result<std::unique_ptr<Fleet>> make_fleet(const config::Config& config, store::Store& local,
                                                  store::EntryTransfer& removals);

// Once the compile path exists: fleet single flight, a builder's compiles of consumers' asks, and
// the sampled re-verification (which quarantines through `tenancy`).
void attach_compile_path(Fleet& fleet, const config::Config& config, CompilePath& compile, store::Tenancy& tenancy);

}  // namespace jitcache::daemon::startup
