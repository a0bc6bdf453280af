// What the fleet tier is told by the configuration (docs/configuration.md: remote_*), gathered in
// one value so the tier, its upload queue and its leases read the same figures.
// Thread safety: plain value.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace jitcache::daemon::remote {

struct TierSettings {
  // remote_timeout: how long a local miss may wait for the remotes, all of them together, before
  // it goes on as a miss. A hit never waits longer.
  std::chrono::milliseconds timeout{50};
  // How long one background call (an upload, a lease, a verification's source) may take.
  std::chrono::milliseconds background_timeout{10'000};
  // remote_max_image: a record naming a larger image, or a larger object, is rejected unread.
  std::uint64_t max_image = 64ull << 20;
  // The largest source (PTX) kept in or read from the remote: compile_max_ptx.
  std::uint64_t max_source = 64ull << 20;
  // remote_verify_sample: the fraction of remote hits recompiled here and compared.
  double verify_sample = 0;
  // remote_upload_source: whether uploads carry the PTX (the `src` space) for re-verification.
  bool upload_source = false;
  // This host's name, in the records it signs and the leases it takes.
  std::string host;
  // The upload queue's bounds: entries, and image plus source bytes held.
  std::size_t upload_queue_entries = 256;
  std::uint64_t upload_queue_bytes = 256ull << 20;
  // A lease's lifetime (remote_lease_ttl). The holder renews it every third of that while it
  // compiles, so a holder that dies frees the key within lease_ttl however long compiles take.
  // Waiters wait at most lease_wait (the longest a compile may take, and a lease_ttl), then compile
  // themselves.
  std::chrono::milliseconds lease_ttl{15'000};
  std::chrono::milliseconds lease_wait{135'000};
  // remote_builder_wait: how long a host that finds no lease, while a builder is up, waits for one
  // to appear (a builder's own request for the key arriving a little later) before it compiles.
  std::chrono::milliseconds builder_wait{2'000};
  // Whether a host that signs announces itself in the remote (docs/remote-layout.md "Builders"):
  // the daemon does (startup/fleet_setup.cpp); a tier built for a test or a one-off probe need not.
  bool announce_builder = false;
};

}  // namespace jitcache::daemon::remote
