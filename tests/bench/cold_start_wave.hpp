// One wave of bench_cold_start: N fresh processes (this program in --child mode,
// client_load_child.hpp) that each create their CUDA context, wait at a common start line, and then
// load one module at the same moment. The wave's wall time runs from the start line to the end of
// the last load, so context creation (which the driver serialises) is not in it.
// Thread safety: run_wave() is called from one thread; it starts one thread per child and joins them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <tests/bench/client_load_child.hpp>
#include <tests/support/child_process.hpp>

namespace jitcache::bench {

struct WaveResult {
  unsigned processes = 0;
  double wall_seconds = 0;                   // start line → the last load's end
  std::vector<double> load_seconds;          // each child's load call
  std::map<std::string, unsigned> outcomes;  // jitcache outcome → children (jitcache mode)
  std::vector<std::string> failures;         // one line per child that did not report a result
};

WaveResult run_wave(ChildMode mode, const std::string& module_path, const std::vector<testing::EnvChange>& env,
                    unsigned processes);

}  // namespace jitcache::bench
