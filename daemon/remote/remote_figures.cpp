#include <daemon/remote/remote_figures.hpp>

namespace jitcache::daemon::remote {

namespace {

std::uint64_t read(const RemoteCounters::Counter& c) { return c.load(std::memory_order_relaxed); }

}  // namespace

std::vector<RemoteFigure> remote_figures(const RemoteTier& tier, std::size_t index) {
  const RemoteEndpoint& remote = tier.remote(index);
  const RemoteCounters& c = remote.counters;
  std::vector<RemoteFigure> out;
  auto counter = [&](std::string name, std::string_view metric, std::string_view help, std::uint64_t value) {
    out.push_back({std::move(name), metric, help, true, {}, {}, value});
  };
  counter("lookups", "jitcache_remote_lookups_total", "Local misses asked of the remote.", read(c.lookups));
  counter("hits", "jitcache_remote_hits_total", "Entries the remote served that passed every check.", read(c.hits));
  counter("misses", "jitcache_remote_misses_total", "Lookups the remote had no record for.", read(c.misses));
  counter("skipped", "jitcache_remote_skipped_total", "Calls not made because the remote's circuit breaker was open.",
          read(c.skipped));
  for (std::size_t i = 0; i < k_remote_error_kinds.size(); ++i) {
    const std::string_view kind = k_remote_error_kinds[i].second;
    out.push_back({"errors." + std::string(kind), "jitcache_remote_errors_total",
                   "Remote calls that failed, by kind: timeout, unavailable (cannot connect), forbidden (credentials "
                   "or ACL), garbage (not the remote's protocol), server (an error reply), too_large, unsupported.",
                   true, "kind", kind, read(c.errors[i])});
  }
  for (std::size_t i = 0; i < k_rejection_count; ++i) {
    const std::string_view reason = k_rejection_names[i];
    out.push_back({"rejected." + std::string(reason), "jitcache_remote_rejections_total",
                   "Entries read from the remote and not served, by the check they failed "
                   "(docs/remote-layout.md \"Checks on read\").",
                   true, "reason", reason, read(c.rejections[i])});
  }
  counter("bytes_read", "jitcache_remote_read_bytes_total", "Record, image and source bytes received.",
          read(c.bytes_read));
  counter("bytes_written", "jitcache_remote_written_bytes_total", "Record, image and source bytes sent.",
          read(c.bytes_written));
  counter("uploads", "jitcache_remote_uploads_total", "Entries this host uploaded (its record written).",
          read(c.uploads));
  counter("upload_failures", "jitcache_remote_upload_failures_total", "Uploads that failed.", read(c.upload_failures));
  counter("upload_drops", "jitcache_remote_upload_drops_total", "Uploads dropped because the upload queue was full.",
          read(c.upload_drops));
  counter("leases_won", "jitcache_remote_leases_won_total", "Compiles run here under a fleet lease this host took.",
          read(c.leases_won));
  counter("leases_waited", "jitcache_remote_leases_waited_total",
          "Compiles that waited for another host's lease instead of compiling.", read(c.leases_waited));
  counter("lease_waits_served", "jitcache_remote_lease_waits_served_total",
          "Of those, the ones answered by the entry the other host uploaded.", read(c.lease_waits_served));
  counter("lease_waits_expired", "jitcache_remote_lease_waits_expired_total",
          "Of those, the ones that compiled here after all (the holder failed, died or was too slow).",
          read(c.lease_waits_expired));
  counter("verify_samples", "jitcache_remote_verify_samples_total",
          "Remote hits compiled again here and compared byte for byte.", read(c.verify_samples));
  counter("verify_mismatches", "jitcache_remote_verify_mismatches_total",
          "Of those, the ones that differed: quarantined here.", read(c.verify_mismatches));
  counter("verify_skipped", "jitcache_remote_verify_skipped_total",
          "Sampled remote hits that could not be compared (no source, another toolkit, a link).",
          read(c.verify_skipped));
  counter("breaker_opens", "jitcache_remote_breaker_opens_total", "Times the remote's circuit breaker opened.",
          read(c.breaker_opens));
  // The remote heals (daemon/remote/healer.hpp).
  counter("wants_sent", "jitcache_remote_wants_sent_total",
          "Keys this consumer found in no remote and asked the builders for (the wants queue).", read(c.wants_sent));
  counter("heals", "jitcache_remote_heals_total",
          "Entries this builder held locally and uploaded again because the remote lacked them.", read(c.heals));
  // Compile asks (daemon/remote/ask_desk.hpp).
  counter("asks_sent", "jitcache_remote_asks_sent_total",
          "Keys this consumer asked the builders to compile for it (docs/remote-layout.md \"Asks\").",
          read(c.asks_sent));
  counter("asks_taken", "jitcache_remote_asks_taken_total",
          "Consumers' asks this builder took: it holds the key's lease and handed the compile to its compile service.",
          read(c.asks_taken));
  counter("asks_refused", "jitcache_remote_asks_refused_total",
          "Asks this builder refused: too long, malformed, or a PTX whose digest is not the ask's.",
          read(c.asks_refused));
  counter("asks_skipped", "jitcache_remote_asks_skipped_total",
          "Sound asks this builder left: the key's lease held, the key held here or taken lately, the ask expired.",
          read(c.asks_skipped));
  out.push_back({"breaker_state",
                 "jitcache_remote_breaker_state",
                 "The remote's circuit breaker now: 0 closed (in use), 1 open (skipped), 2 half open (probing).",
                 false,
                 {},
                 {},
                 static_cast<std::uint64_t>(remote.breaker.state())});
  std::uint64_t calls = 0;
  for (const auto& bucket : c.latency_buckets) calls += read(bucket);
  counter("calls", "jitcache_remote_calls_total", "Remote calls made (the latency histogram's count).", calls);
  counter("call_microseconds", "jitcache_remote_call_microseconds_total", "Their time, summed.",
          read(c.latency_sum_us));
  return out;
}

std::vector<std::pair<std::string, std::uint64_t>> remote_stats_values(const RemoteTier* tier) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  out.emplace_back("remotes", tier != nullptr ? tier->remote_count() : 0);
  out.emplace_back("remote_uploads_queued", tier != nullptr ? tier->uploads_queued() : 0);
  if (tier == nullptr) return out;
  for (std::size_t i = 0; i < tier->remote_count(); ++i) {
    const std::string prefix = "remote" + std::to_string(i) + ".";
    for (RemoteFigure& figure : remote_figures(*tier, i)) out.emplace_back(prefix + figure.stats_name, figure.value);
    // The latency histogram, which the metrics endpoint shows as jitcache_remote_duration_seconds:
    // a STATS reader (jitcache stats) gets the same buckets, each counted on its own (not cumulative).
    const auto& buckets = tier->remote(i).counters.latency_buckets;
    for (std::size_t b = 0; b < k_remote_latency_buckets.size(); ++b) {
      out.emplace_back(prefix + "calls_le_" + std::to_string(k_remote_latency_buckets[b].upper_us) + "_us",
                       read(buckets[b]));
    }
    out.emplace_back(prefix + "calls_over_" + std::to_string(k_remote_latency_buckets.back().upper_us) + "_us",
                     read(buckets.back()));
    for (auto& [name, value] : tier->remote(i).backend->own_figures()) out.emplace_back(prefix + name, value);
  }
  return out;
}

}  // namespace jitcache::daemon::remote
