// Failure injection: which driver call fails next, with which CUresult, how many more times.
//
// Set from FAKE_CUDA_FAIL="point:code[:times],..." (for child processes) or fake_cuda_set_failure
// (in-process). A point without `times` fails every call; with it, only the next `times` calls.
// Thread safety: every member function may be called from any thread (one mutex); take() consumes a
// use atomically, so N threads racing for a `times = 1` failure see exactly one failure.
#pragma once

#include <array>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::fakes::fake_cuda {

// Numbered to index the plan; not persisted.
enum class FaultPoint : std::size_t {
  ctx,            // cuCtxGetDevice (e.g. 201: no current context)
  load_cubin,     // any load entry point given an ELF cubin (cuModuleLoad*; cuLibraryLoad*: deferred)
  load_ptx,       // any load entry point given PTX text
  load_fatbin,    // any load entry point given a fat binary
  link_create,    // cuLinkCreate (e.g. 221: no JIT compiler, 223: JIT disabled)
  link_add,       // cuLinkAddData, cuLinkAddFile (e.g. 218)
  link_complete,  // cuLinkComplete (e.g. 2)
  load_library,   // cuLibraryLoadData / cuLibraryLoadFromFile themselves (e.g. 2), before any work
  launch,         // cuLaunchKernel (e.g. 719: launch failed)
};
inline constexpr std::size_t k_fault_point_count = 9;

std::optional<FaultPoint> fault_point_from_name(std::string_view name);
std::string_view fault_point_name(FaultPoint point);

struct FaultRule {
  FaultPoint point = FaultPoint::ctx;
  int code = 0;
  int times = 0;  // <= 0: every call
};

// Parses "point:code[:times],...". Malformed items are skipped and described in `problems`, so a typo
// in a test's environment is visible on stderr rather than silently ignored.
std::vector<FaultRule> parse_fault_spec(std::string_view spec, std::vector<std::string>& problems);

class FaultPlan {
 public:
  // code 0 removes the point.
  void set(FaultPoint point, int code, int times);
  void clear();
  // The code to fail with now, consuming one use; nullopt when the call should proceed.
  std::optional<int> take(FaultPoint point);

 private:
  struct Slot {
    int code = 0;       // 0: not armed
    int remaining = 0;  // <= 0: unlimited
  };
  std::mutex m_mutex;
  std::array<Slot, k_fault_point_count> m_slots{};
};

}  // namespace jitcache::fakes::fake_cuda
