// How the LOOKUP benchmark shows its figures: the machine, a table for people (one row per cell,
// printed as each cell finishes), the cost-per-request table, the target lines, and a JSON record
// of all of it for docs/benchmarks.md and later comparison. Thread safety: free functions.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <tests/bench/cell_figures.hpp>
#include <tests/bench/lookup_targets.hpp>
#include <tests/bench/machine_info.hpp>

namespace jitcache::bench {

// What was run, as recorded next to the figures.
struct RunDescription {
  MachineInfo machine;
  std::string command_line;
  std::string daemon;  // "started by the benchmark" or the --socket path
  std::string daemon_version;
  std::string redis_version;  // empty with --no-redis
  double seconds = 0;
  double warm_up_seconds = 0;
  unsigned keys_per_size = 0;
};

std::string format_size(std::size_t bytes);  // "4 KB", "190 KB", "1.6 MB"

void print_run(std::ostream& out, const RunDescription& run);
void print_table_header(std::ostream& out);
void print_table_row(std::ostream& out, const CellFigures& cell);
void print_cpu_table(std::ostream& out, const std::vector<CellFigures>& cells);
void print_targets(std::ostream& out, const std::vector<TargetCheck>& checks);

nlohmann::json to_json(const RunDescription& run, const std::vector<CellFigures>& cells,
                       const std::vector<TargetCheck>& checks);

}  // namespace jitcache::bench
