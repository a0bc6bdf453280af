#include <daemon/metrics/counter_families.hpp>

#include <algorithm>
#include <span>
#include <string>

namespace jitcache::daemon::metrics {

namespace {

using stats::CounterRow;

MetricType metric_type(stats::FigureType type) {
  return type == stats::FigureType::gauge ? MetricType::gauge : MetricType::counter;
}

Labels labels_of(const CounterRow& row, std::string_view value) {
  if (row.label_name.empty()) return {};
  return {{row.label_name, std::string(value)}};
}

void append_family(Exposition& out, std::span<const CounterRow> family, const stats::FigureSources& sources) {
  const CounterRow& head = family.front();
  out.family(head.metric, metric_type(head.type), head.help);
  std::uint64_t parts = 0;
  for (const CounterRow& row : family.subspan(1)) parts += stats::read_field(row.field, sources);
  for (const CounterRow& row : family) {
    if (std::holds_alternative<stats::PerStatus>(row.field)) {
      for (const auto& status : proto::k_statuses) {
        if (status.value != proto::Status::ok) {
          out.sample(row.metric, labels_of(row, status.name), sources.counters.errors(status.value));
        }
      }
      continue;
    }
    std::uint64_t value = stats::read_field(row.field, sources);
    // Read one by one, the parts may run ahead of the total for an instant: never below zero.
    if (row.family_total) value -= std::min(value, parts);
    if (!row.stats_seconds_name.empty()) {
      out.sample(row.metric, labels_of(row, row.label_value), static_cast<double>(value) / 1e6);
    } else {
      out.sample(row.metric, labels_of(row, row.label_value), value);
    }
  }
}

}  // namespace

void append_counter_families(Exposition& out, const stats::FigureSources& sources) {
  const std::span<const CounterRow> rows(stats::k_counter_table);
  for (std::size_t first = 0; first < rows.size();) {
    std::size_t end = first + 1;
    while (end < rows.size() && rows[end].metric == rows[first].metric) ++end;
    if (sources.totals != nullptr || !stats::reads_totals(rows[first])) {
      append_family(out, rows.subspan(first, end - first), sources);
    }
    first = end;
  }
}

}  // namespace jitcache::daemon::metrics
