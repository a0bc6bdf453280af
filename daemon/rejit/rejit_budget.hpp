// RejitBudget: the compile time one re-JIT batch may spend (config key rejit_budget). A compile is
// started only when what the batch has spent, plus what its running compiles are expected to cost,
// plus this one's expected cost, fits; its expected cost is what the entry took to compile the
// first time (entries.compile_time_us). When it finishes its actual time replaces the estimate.
// Rationale: estimates, because the budget must stop a batch before it overruns, not after; the
// entry's own first compile is the best estimate there is (the same PTX, the same options).
// Thread safety: none; one batch's thread owns it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace jitcache::daemon::rejit {

class RejitBudget {
 public:
  explicit RejitBudget(std::uint64_t budget_us) : m_budget_us(budget_us) {}

  // Reserves `estimate_us` (at least 1) for a compile about to start; false when it does not fit.
  bool reserve(std::uint64_t estimate_us) {
    const std::uint64_t cost = std::max<std::uint64_t>(estimate_us, 1);
    if (m_spent_us + m_reserved_us + cost > m_budget_us) return false;
    m_reserved_us += cost;
    return true;
  }
  // The compile reserved with `estimate_us` ended after `actual_us` of compile time (0: it did not
  // run, e.g. refused).
  void settle(std::uint64_t estimate_us, std::uint64_t actual_us) {
    m_reserved_us -= std::min(m_reserved_us, std::max<std::uint64_t>(estimate_us, 1));
    m_spent_us += actual_us;
  }

  std::uint64_t spent_us() const { return m_spent_us; }
  std::uint64_t reserved_us() const { return m_reserved_us; }

 private:
  const std::uint64_t m_budget_us;
  std::uint64_t m_spent_us = 0;
  std::uint64_t m_reserved_us = 0;
};

}  // namespace jitcache::daemon::rejit
