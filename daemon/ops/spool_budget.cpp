#include <daemon/ops/spool_budget.hpp>

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace jitcache::daemon::ops {

using common::ErrorCode;
using common::make_error;

SpoolBudget::Grant::Grant(Grant&& other) noexcept
    : m_budget(std::exchange(other.m_budget, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}

SpoolBudget::Grant& SpoolBudget::Grant::operator=(Grant&& other) noexcept {
  if (this != &other) {
    if (m_budget != nullptr) m_budget->give_back(m_bytes);
    m_budget = std::exchange(other.m_budget, nullptr);
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

SpoolBudget::Grant::~Grant() {
  if (m_budget != nullptr) m_budget->give_back(m_bytes);
}

SpoolBudget::SpoolBudget(std::string dir, std::uint64_t reserve,
                         std::function<common::Result<std::uint64_t>()> free_bytes)
    : m_dir(std::move(dir)), m_reserve(reserve), m_free_bytes(std::move(free_bytes)) {
  if (!m_free_bytes) {
    m_free_bytes = [this]() -> common::Result<std::uint64_t> {
      struct statvfs fs {};
      if (::statvfs(m_dir.c_str(), &fs) != 0) {
        return make_error(ErrorCode::io, "statvfs " + m_dir + ": " + std::strerror(errno));
      }
      return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
    };
  }
}

common::Result<SpoolBudget::Grant> SpoolBudget::reserve(std::uint64_t bytes, const std::string& what) {
  JITCACHE_TRY(take(bytes, what));
  return Grant(this, bytes);
}

common::Result<void> SpoolBudget::Grant::grow(std::uint64_t more, const std::string& what) {
  if (m_budget == nullptr) return make_error(ErrorCode::internal, "growing an empty spool grant");
  JITCACHE_TRY(m_budget->take(more, what));
  m_bytes += more;
  return {};
}

common::Result<void> SpoolBudget::take(std::uint64_t bytes, const std::string& what) {
  auto free = m_free_bytes();
  JITCACHE_TRY(free);
  std::lock_guard lock(m_mutex);
  // What spools were granted may not be written yet; count it as taken.
  const std::uint64_t taken = m_granted + m_reserve;
  if (*free < taken || *free - taken < bytes) {
    return make_error(ErrorCode::no_space,
                      what + " needs " + std::to_string(bytes) +
                          " more bytes of spool in the state directory, which has " + std::to_string(*free) +
                          " bytes free, " + std::to_string(m_granted) +
                          " of them granted to bundle operations, and keeps bundle_spool_reserve (" +
                          std::to_string(m_reserve) + " bytes) free for the store: nothing more was written");
  }
  m_granted += bytes;
  return {};
}

std::uint64_t SpoolBudget::granted() const {
  std::lock_guard lock(m_mutex);
  return m_granted;
}

void SpoolBudget::give_back(std::uint64_t bytes) {
  std::lock_guard lock(m_mutex);
  m_granted -= bytes;
}

}  // namespace jitcache::daemon::ops
