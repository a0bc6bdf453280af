// Damage to a store's database file, as a failing disk or a stray write would leave it, for the
// integrity tests. Header-only (it needs only the standard library and Catch2's REQUIRE).
// Thread safety: a free function; the caller makes sure nothing writes the file meanwhile.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>

namespace jitcache::testing {

// The store's page size (daemon/store/pragmas.cpp).
inline constexpr std::uintmax_t k_store_page_size = 16384;

// Garbage over every page but the first, which holds the header and the schema: the b-tree pages
// of every table and index are no longer b-tree pages, so quick_check fails and a read of any
// entry reports SQLITE_CORRUPT. The file keeps its size (a mapped reader sees garbage, not SIGBUS).
inline void overwrite_pages_after_the_first(const std::filesystem::path& db) {
  const auto size = std::filesystem::file_size(db);
  REQUIRE(size > 2 * k_store_page_size);
  std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(k_store_page_size));
  for (std::uintmax_t i = k_store_page_size; i < size; ++i) file.put(static_cast<char>(0xA5 ^ (i * 31)));
  REQUIRE(file.good());
}

}  // namespace jitcache::testing
