// Bundles at start-up (docs/operations.md "Container images"): the BundleService with this host's
// signing key and the trusted keys (the fleet's remote_signing_key and remote_trusted_keys, whether
// or not a remote is set), and the bundles of import_dir, each imported once.
// Thread safety: start-up, on the main thread, before the server serves.
#pragma once

#include <memory>
#include <string>

#include <common/result.hpp>
#include <daemon/config/config.hpp>
#include <daemon/ops/bundle_service.hpp>
#include <daemon/policy/trust_policy.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/entry_transfer.hpp>

namespace jitcache::daemon::startup {

// A key file that is wrong stops the start with the reason, as for the fleet.
common::Result<std::unique_ptr<ops::BundleService>> make_bundle_service(const config::Config& config,
                                                                        store::EntryTransfer& transfer,
                                                                        stats::Counters& counters,
                                                                        policy::TrustPolicy trust);

// The file beside the state that remembers which bundles were imported (one digest a line).
inline constexpr char k_imported_bundles_file[] = "imported-bundles";

// Imports every `*.jcb` of import_dir (in name order) not imported before into the shared
// namespace; a bundle refused is logged with its reason and skipped, and the daemon starts all the
// same. Never fails: a directory that cannot be read is logged.
void import_bundles_at_start(const config::Config& config, ops::BundleService& bundles);

}  // namespace jitcache::daemon::startup
