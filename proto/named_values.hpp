// NamedValue: one row of a table that names the numbered values of a protocol vocabulary (ops,
// statuses, capability bits, header flags, selectors, load stages, …), so that the names a program
// prints, the tests and PROTOCOL.md all read one list (tests/unit/test_proto_protocol_spec.cpp checks
// every row against PROTOCOL.md's tables, and every enumerator against its table).
// Thread safety: constant data and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace jitcache::proto {

template <class T>
struct NamedValue {
  T value;
  std::string_view name;
};

// The name of `value` in `table`; "unknown" for a value outside it.
template <class T, std::size_t N>
constexpr std::string_view name_in(const std::array<NamedValue<T>, N>& table, T value) {
  for (const NamedValue<T>& row : table) {
    if (row.value == value) return row.name;
  }
  return "unknown";
}

}  // namespace jitcache::proto
