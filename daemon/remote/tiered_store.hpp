// TieredStore: the store a fleet daemon serves from — its local store in front of the remote tier
// (docs/architecture.md "A remote tier: a tiered store"). A lookup the local store cannot serve
// (no entry at all) goes to the remotes; what they serve, checked (remote_tier.hpp), is written to
// the local store's shared namespace first, with its producer and signer, and served from there,
// so eviction, quarantine, publishing and usage stay the local store's. Local hits never touch the
// remotes. A put goes to the local store, and an entry of the shared namespace (compiled here, or a
// trusted PUT) is queued for upload when this host signs; a uid's own namespace never leaves the
// host. remove, list and totals are the local store's: the remote is a cache of caches.
//
// A local entry that is quarantined or was just found corrupt is a miss here too, without asking
// the remotes: the fleet's copy is most likely the same image (a sampled re-verification or a
// REPORT_FAILURE decides about it here, not a second download). A key an operator removed from the
// shared namespace (REMOVE by a trusted caller) is not taken from a remote either, as no bundle
// import takes it (docs/security.md "Bundles"): the remote's copy is the bytes the operator removed.
//
// Thread safety: as Store; lookups that go remote block for at most remote_timeout.
#pragma once

#include <daemon/remote/healer.hpp>
#include <daemon/remote/remote_tier.hpp>
#include <daemon/remote/verify_sampler.hpp>
#include <daemon/store/entry_transfer.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::remote {

class TieredStore final : public store::Store {
 public:
  // `sampler`: offered every remote hit (null: no re-verification).
  TieredStore(store::Store& local, RemoteTier& tier, VerifySampler* sampler = nullptr)
      : m_local(local), m_tier(tier), m_sampler(sampler) {}

  // Set before serving starts (the sampler needs the compile path, which needs this store).
  void set_sampler(VerifySampler* sampler) { m_sampler = sampler; }
  // Set before serving starts: offered this builder's local hits and a consumer's remote misses.
  void set_healer(Healer* healer) { m_healer = healer; }
  // Set before serving starts: tells which keys an operator removed from the shared namespace.
  void set_removals(store::EntryTransfer* removals) { m_removals = removals; }

  common::Result<store::LookupOutcome> lookup(const store::Selector& selector, const store::Visibility& who) override;
  common::Result<store::PutOutcome> put(const store::PutInput& input) override;
  common::Result<std::uint32_t> remove(const std::string& prefix, const store::Visibility& who) override {
    return m_local.remove(prefix, who);
  }
  common::Result<store::ListPage> list(const store::ListQuery& query, const store::Visibility& who) override {
    return m_local.list(query, who);
  }
  common::Result<store::Totals> totals() override { return m_local.totals(); }

 private:
  // Whether an operator removed the key from the shared namespace (a store error: not known, so no).
  bool removed_by_operator(const proto::Digest256& key_id);
  // The remote's entry stored locally and served from the local store.
  common::Result<store::LookupOutcome> serve_fetched(const store::Selector& selector, const store::Visibility& who,
                                                     Fetched fetched);

  store::Store& m_local;
  RemoteTier& m_tier;
  VerifySampler* m_sampler;
  Healer* m_healer = nullptr;
  store::EntryTransfer* m_removals = nullptr;
};

// The local producer of an entry a remote served: its builder's producer and who signed it
// ("nvJitLink 13.0; signer 0123456789abcdef").
std::string remote_producer(const IndexRecord& record);

}  // namespace jitcache::daemon::remote
