#include <daemon/metrics/remote_families.hpp>

#include <map>

#include <daemon/remote/remote_figures.hpp>

namespace jitcache::daemon::metrics {

void append_remote_families(Exposition& out, const remote::RemoteTier* tier) {
  if (tier == nullptr || tier->remote_count() == 0) return;
  out.family("jitcache_remote_uploads_queued", MetricType::gauge, "Uploads waiting in the fleet tier's queue now.");
  out.sample("jitcache_remote_uploads_queued", {}, static_cast<std::uint64_t>(tier->uploads_queued()));

  std::vector<std::vector<remote::RemoteFigure>> figures;
  for (std::size_t i = 0; i < tier->remote_count(); ++i) figures.push_back(remote::remote_figures(*tier, i));
  // Families in the order of the first remote's list; each family's samples together, remote by remote.
  std::vector<std::string_view> order;
  for (const auto& figure : figures.front()) {
    if (order.empty() || order.back() != figure.metric) order.push_back(figure.metric);
  }
  for (std::string_view metric : order) {
    bool declared = false;
    for (std::size_t i = 0; i < figures.size(); ++i) {
      for (const auto& figure : figures[i]) {
        if (figure.metric != metric) continue;
        if (!declared) {
          out.family(metric, figure.counter ? MetricType::counter : MetricType::gauge, figure.help);
          declared = true;
        }
        Labels labels{{"remote", std::to_string(i)}, {"url", tier->remote(i).backend->name()}};
        if (!figure.label_name.empty()) labels.emplace_back(figure.label_name, std::string(figure.label_value));
        out.sample(metric, labels, figure.value);
      }
    }
  }

  out.family("jitcache_remote_duration_seconds", MetricType::histogram, "Time of each remote call, by remote.");
  std::vector<std::string_view> le;
  for (const auto& bucket : remote::k_remote_latency_buckets) le.push_back(bucket.le);
  for (std::size_t i = 0; i < tier->remote_count(); ++i) {
    const remote::RemoteCounters& c = tier->remote(i).counters;
    std::vector<std::uint64_t> counts;
    for (const auto& bucket : c.latency_buckets) counts.push_back(bucket.load(std::memory_order_relaxed));
    out.histogram("jitcache_remote_duration_seconds",
                  {{"remote", std::to_string(i)}, {"url", tier->remote(i).backend->name()}}, le, counts,
                  static_cast<double>(c.latency_sum_us.load(std::memory_order_relaxed)) / 1e6);
  }
}

}  // namespace jitcache::daemon::metrics
