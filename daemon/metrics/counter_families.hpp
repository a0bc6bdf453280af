// The metric families of the daemon's figure table (daemon/stats/counter_table.hpp): one family per
// metric name the table uses, its samples the rows that name it, so that /metrics shows every
// figure STATS reports, with the same value (seconds for a row kept in microseconds).
// Thread safety: as Exposition (one writer); the figures are read as stats::read_field reads them.
#pragma once

#include <daemon/metrics/exposition.hpp>
#include <daemon/stats/counter_table.hpp>

namespace jitcache::daemon::metrics {

// Appends the table's families in table order. Families read from the store's totals are left out
// when `sources.totals` is null (the read failed; the scrape still shows the rest).
void append_counter_families(Exposition& out, const stats::FigureSources& sources);

}  // namespace jitcache::daemon::metrics
