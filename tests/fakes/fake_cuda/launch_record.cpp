#include <tests/fakes/fake_cuda/launch_record.hpp>

namespace jitcache::fakes::fake_cuda {

void LaunchRecord::record(const fake_cuda_launch& launch) {
  const std::lock_guard lock(m_mutex);
  m_last = launch;
  m_any = true;
}

bool LaunchRecord::last(fake_cuda_launch& out) const {
  const std::lock_guard lock(m_mutex);
  out = m_last;
  return m_any;
}

void LaunchRecord::reset() {
  const std::lock_guard lock(m_mutex);
  m_last = fake_cuda_launch{};
  m_any = false;
}

}  // namespace jitcache::fakes::fake_cuda
