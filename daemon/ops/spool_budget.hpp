// How much of the state directory's disk the bundle spools (private_spool.hpp) may take, granted
// before a byte is written: the free space, less what spools already hold or were granted, must
// stay above `reserve` (bundle_spool_reserve), so a caller's bundle never fills the disk the store
// and the other tenants' PUTs need. A grant is returned when the operation ends.
//
// Rationale: checked from the bundle's size (fstat) before it is read, because a sparse file can
// claim far more than it costs its owner's disk; what the spool then writes is held to the grant.
// Thread safety: reserve() and the grants' destruction from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include <common/result.hpp>

namespace jitcache::daemon::ops {

class SpoolBudget {
 public:
  class Grant {
   public:
    Grant() = default;
    Grant(SpoolBudget* budget, std::uint64_t bytes) : m_budget(budget), m_bytes(bytes) {}
    Grant(Grant&& other) noexcept;
    Grant& operator=(Grant&& other) noexcept;
    Grant(const Grant&) = delete;
    Grant& operator=(const Grant&) = delete;
    ~Grant();
    std::uint64_t bytes() const { return m_bytes; }
    // `more` bytes on top, on the same terms as reserve() (an export, whose size is known only as it
    // is written, grows its grant step by step).
    common::Result<void> grow(std::uint64_t more, const std::string& what);

   private:
    SpoolBudget* m_budget = nullptr;
    std::uint64_t m_bytes = 0;
  };

  // `free_bytes`: the disk's free space for the daemon (statvfs of `dir`; tests pass their own).
  SpoolBudget(std::string dir, std::uint64_t reserve, std::function<common::Result<std::uint64_t>()> free_bytes = {});

  // no_space (the message says how much is free and the reserve) when `bytes` do not fit.
  common::Result<Grant> reserve(std::uint64_t bytes, const std::string& what);
  std::uint64_t granted() const;

 private:
  common::Result<void> take(std::uint64_t bytes, const std::string& what);
  void give_back(std::uint64_t bytes);

  std::string m_dir;
  std::uint64_t m_reserve;
  std::function<common::Result<std::uint64_t>()> m_free_bytes;
  mutable std::mutex m_mutex;
  std::uint64_t m_granted = 0;
};

}  // namespace jitcache::daemon::ops
