// Kernel launches as the fake "runs" them: nothing executes, but each accepted cuLaunchKernel is
// counted (Counters::kernels_launched) and the last one is remembered (fake_cuda_last_launch), so a
// test program can print which kernel it ran with which geometry and a test can compare two runs.
// Thread safety: every member function may be called from any thread (one mutex).
#pragma once

#include <tests/fakes/fake_cuda/fake_cuda_control.h>

#include <mutex>

namespace jitcache::fakes::fake_cuda {

class LaunchRecord {
 public:
  void record(const fake_cuda_launch& launch);
  // false (and a zeroed `out`) when nothing was launched since the last reset.
  bool last(fake_cuda_launch& out) const;
  void reset();

 private:
  mutable std::mutex m_mutex;
  fake_cuda_launch m_last{};
  bool m_any = false;
};

}  // namespace jitcache::fakes::fake_cuda
