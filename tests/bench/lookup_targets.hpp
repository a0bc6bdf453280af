// The performance targets the LOOKUP benchmark reports against. They are printed as PASS/MISS,
// never asserted: a benchmark on a shared or small machine must not fail a build.
// Thread safety: free functions over plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <tests/bench/cell_figures.hpp>

namespace jitcache::bench {

struct TargetCheck {
  std::string description;
  std::optional<bool> met;  // nullopt: the cell it needs was not measured (or Redis was off)
  std::string measured;     // the figure it was judged on, e.g. "0.62x"
};

std::vector<TargetCheck> check_lookup_targets(const std::vector<CellFigures>& cells);

std::string verdict(const TargetCheck& check);  // "PASS", "MISS" or "not measured"

}  // namespace jitcache::bench
