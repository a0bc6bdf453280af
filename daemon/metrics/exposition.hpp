// Writes the Prometheus text exposition format, version 0.0.4 (what GET /metrics answers with):
// a `# HELP` and a `# TYPE` line per metric family, then its samples, one per line.
// https://prometheus.io/docs/instrumenting/exposition_formats/
// Thread safety: one writer per thread; the free functions are pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jitcache::daemon::metrics {

using Labels = std::vector<std::pair<std::string_view, std::string>>;

enum class MetricType { counter, gauge, histogram };

class Exposition {
 public:
  // Starts a family. Counter names end in _total (the caller names them so).
  void family(std::string_view name, MetricType type, std::string_view help);
  void sample(std::string_view name, const Labels& labels, std::uint64_t value);
  void sample(std::string_view name, const Labels& labels, double value);
  // A histogram's samples: <name>_bucket for each bound in `le` and +Inf, cumulative, then
  // <name>_sum and <name>_count. `counts` holds one count per bound plus one for above the last,
  // not cumulative; _count is their total, so it always equals the +Inf bucket.
  void histogram(std::string_view name, const Labels& labels, std::span<const std::string_view> le,
                 std::span<const std::uint64_t> counts, double sum);

  const std::string& text() const { return m_text; }
  std::string take() { return std::move(m_text); }

 private:
  void sample_head(std::string_view name, const Labels& labels, std::string_view extra_label = {},
                   std::string_view extra_value = {});
  std::string m_text;
};

// Label values escape backslash, double quote and line feed; HELP text escapes backslash and line feed.
std::string escape_label_value(std::string_view value);
std::string escape_help(std::string_view help);
// Shortest text that reads back as the same double; +Inf, -Inf and NaN as Prometheus spells them.
std::string format_value(double value);

}  // namespace jitcache::daemon::metrics
