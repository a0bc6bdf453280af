#include <daemon/stats/counter_table.hpp>

#include <daemon/remote/remote_figures.hpp>

#include <cassert>

namespace jitcache::daemon::stats {

namespace {

std::uint64_t load(const std::atomic<std::uint64_t>& counter) { return counter.load(std::memory_order_relaxed); }

}  // namespace

std::uint64_t read_field(const Field& field, const FigureSources& sources) {
  struct Reader {
    const FigureSources& s;
    std::uint64_t operator()(Counters::Counter Counters::*member) const { return load(s.counters.*member); }
    std::uint64_t operator()(std::uint64_t store::Totals::*member) const {
      return s.totals != nullptr ? s.totals->*member : 0;
    }
    std::uint64_t operator()(std::uint64_t publish::PublisherStats::*member) const { return s.published.*member; }
    std::uint64_t operator()(compile::CompileCounters::Counter compile::CompileCounters::*member) const {
      return s.engine != nullptr ? load(s.engine->*member) : 0;
    }
    std::uint64_t operator()(PerStatus) const { return 0; }
    std::uint64_t operator()(std::uint64_t StoreSpace::*member) const { return s.space.*member; }
  };
  return std::visit(Reader{sources}, field);
}

bool reads_totals(const CounterRow& row) { return std::holds_alternative<std::uint64_t store::Totals::*>(row.field); }

std::vector<std::pair<std::string, std::uint64_t>> stats_values(const FigureSources& sources) {
  assert(sources.totals != nullptr);
  std::vector<std::pair<std::string, std::uint64_t>> out;
  out.reserve(k_counter_table.size() + proto::k_status_count);
  for (const CounterRow& row : k_counter_table) {
    if (std::holds_alternative<PerStatus>(row.field)) {
      for (const auto& status : proto::k_statuses) {
        if (status.value == proto::Status::ok) continue;
        out.emplace_back(std::string(row.stats_name) + std::string(status.name), sources.counters.errors(status.value));
      }
      continue;
    }
    const std::uint64_t value = read_field(row.field, sources);
    if (!row.stats_seconds_name.empty()) out.emplace_back(std::string(row.stats_seconds_name), value / 1'000'000);
    out.emplace_back(std::string(row.stats_name), value);
  }
  for (auto& figure : remote::remote_stats_values(sources.counters.fleet)) out.push_back(std::move(figure));
  return out;
}

}  // namespace jitcache::daemon::stats
