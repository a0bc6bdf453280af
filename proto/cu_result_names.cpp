#include <proto/cu_result_names.hpp>

#include <algorithm>

namespace jitcache::proto {

const CuResultName* find_cu_result(std::uint32_t code) {
  const auto* it = std::lower_bound(k_cu_result_names.begin(), k_cu_result_names.end(), code,
                                    [](const CuResultName& row, std::uint32_t c) { return row.code < c; });
  return it != k_cu_result_names.end() && it->code == code ? &*it : nullptr;
}

}  // namespace jitcache::proto
