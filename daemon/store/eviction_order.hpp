// Which entries eviction takes first when the store is over max_size (config key eviction_policy;
// eviction.hpp says the order of each). Stale drivers' entries go before either.
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace jitcache::daemon::store {

enum class EvictionOrder : std::uint8_t {
  lru,   // least recently used first
  gdsf,  // GreedyDual-Size-Frequency: least compile time saved per stored byte, aged by recency
};

// "lru" / "gdsf"; nullopt for any other name.
inline std::optional<EvictionOrder> eviction_order_named(std::string_view name) {
  if (name == "lru") return EvictionOrder::lru;
  if (name == "gdsf") return EvictionOrder::gdsf;
  return std::nullopt;
}

inline std::string_view eviction_order_name(EvictionOrder order) {
  return order == EvictionOrder::lru ? "lru" : "gdsf";
}

}  // namespace jitcache::daemon::store
