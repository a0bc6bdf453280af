// The cache port of a real load (cache_port.hpp): the daemon's published directory read with
// transport/published_reader.hpp, hit notes queued in PendingHitNotes, and one connection from the
// DaemonLink's pool held for the load (DaemonLease), made when first needed or handed in by the
// call that connected first thing (c_api.cpp).
//
// On top of DaemonClient it keeps the rules every call of a load shares: a transport failure
// drops the connection and puts the daemon in back-off (DaemonLease::broken), after which the
// load's calls fail at once; a COMPILE past its wait only drops the connection; a LOOKUP reply over
// the default reply limit is asked again on a fresh connection after HELLO (which learns this
// daemon's limit). It counts every LOOKUP it sends (jitcache_counters.lookups).
// Thread safety: one port per load (cache_port.hpp); the DaemonLink it leases from is shared.
#pragma once

#include <memory>
#include <optional>

#include <client/src/loader/cache_port.hpp>
#include <client/src/loader/client_counters.hpp>
#include <client/src/loader/daemon_link.hpp>

namespace jitcache::client::loader {

class DaemonCachePort final : public CachePort {
 public:
  DaemonCachePort(std::shared_ptr<DaemonLink> daemon, ClientCounters& counters)
      : m_daemon(std::move(daemon)), m_counters(counters) {}

  // A connection (or the reason there is none) acquired before the load started, used instead of
  // acquiring one when the load first needs the daemon.
  void use_connection(common::Result<DaemonLease> lease) { m_lease.emplace(std::move(lease)); }

  common::Result<std::optional<transport::FetchedImage>> read_published(const proto::FastKey& fast_key) override;
  void note_published_hit(const proto::FastKey& fast_key) override;

  common::Result<void> connect() override;
  std::optional<std::uint64_t> known_capabilities() const override;
  common::Result<std::uint64_t> capabilities() override;
  common::Result<std::optional<transport::FetchedImage>> lookup_fast(const proto::FastKey& fast_key,
                                                                     transport::ImageDelivery delivery) override;
  common::Result<std::optional<transport::FetchedImage>> lookup(const proto::KeyFields& key,
                                                                transport::ImageDelivery delivery) override;
  common::Result<transport::CompileAnswer> compile(const proto::CompileRequest& request,
                                                   std::chrono::milliseconds wait) override;
  common::Result<void> put(const proto::PutRequest& request) override;
  common::Result<void> report_failure(const proto::ReportFailureRequest& request) override;
  common::Result<void> note_nvrtc_uncached(proto::NvrtcUncachedReason reason) override;
  common::Result<proto::NvrtcCompileReply> nvrtc_compile(const proto::NvrtcCompileRequest& request,
                                                         std::chrono::milliseconds wait) override;

 private:
  // The load's connection, or the error that stands for it (a failed connect, a dropped connection).
  common::Result<DaemonLease>& lease();
  // A failed call: a transport failure drops the connection and backs off; `error` is returned.
  common::Error failed(const common::Error& error);
  template <class Call>
  common::Result<std::optional<transport::FetchedImage>> lookup_with(Call call);

  std::shared_ptr<DaemonLink> m_daemon;
  ClientCounters& m_counters;
  std::optional<common::Result<DaemonLease>> m_lease;
};

}  // namespace jitcache::client::loader
