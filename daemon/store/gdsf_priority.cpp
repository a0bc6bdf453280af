#include <daemon/store/gdsf_priority.hpp>

#include <algorithm>
#include <string>

#include <common/result.hpp>

namespace jitcache::daemon::store {

namespace {

constexpr char k_read_inflation_sql[] = "SELECT value FROM eviction_inflation WHERE id = 0";
constexpr char k_raise_inflation_sql[] = "UPDATE eviction_inflation SET value = MAX(value, ?1) WHERE id = 0";

// compile_cost_us() over the row's compile_time_us and namespace.
std::string compile_cost_sql() {
  const std::string measured = "(CASE WHEN compile_time_us = 0 THEN " + std::to_string(k_unknown_compile_cost_us) +
                               " ELSE MIN(MAX(compile_time_us, " + std::to_string(k_min_compile_cost_us) + "), " +
                               std::to_string(k_max_compile_cost_us) + ") END)";
  return "(CASE WHEN namespace = 0 THEN " + measured + " ELSE MIN(" + measured + ", " +
         std::to_string(k_max_claimed_compile_cost_us) + ") END)";
}

}  // namespace

std::uint64_t compile_cost_us(std::uint64_t compile_time_us, std::uint32_t namespace_id) {
  const std::uint64_t measured = compile_time_us == 0
                                     ? k_unknown_compile_cost_us
                                     : std::clamp(compile_time_us, k_min_compile_cost_us, k_max_compile_cost_us);
  return namespace_id == 0 ? measured : std::min(measured, k_max_claimed_compile_cost_us);
}

double gdsf_priority(double inflation, std::uint64_t hits, std::uint64_t compile_time_us, std::uint64_t stored_size,
                     std::uint32_t namespace_id) {
  const double frequency = static_cast<double>(std::min(hits, k_max_counted_hits)) + 1.0;
  const double cost = static_cast<double>(compile_cost_us(compile_time_us, namespace_id));
  return inflation + frequency * cost / static_cast<double>(std::max<std::uint64_t>(stored_size, 1));
}

std::string gdsf_priority_sql(std::string_view inflation, std::string_view hits) {
  // (hits + 1.0): REAL arithmetic from the first operation, as gdsf_priority() does it, so both
  // give the same double; an integer product could also overflow for an absurd hit count.
  return "(" + std::string(inflation) + " + (MIN(" + std::string(hits) + ", " + std::to_string(k_max_counted_hits) +
         ") + 1.0) * " + compile_cost_sql() + " / MAX(stored_size, 1))";
}

Result<double> read_inflation(SqliteDb& db) {
  auto stmt = db.statement(k_read_inflation_sql);
  JITCACHE_TRY(stmt);
  auto row = (*stmt)->step("reading the eviction inflation value");
  JITCACHE_TRY(row);
  if (!*row) return common::make_error(common::ErrorCode::corrupt, "the store's eviction_inflation row is missing");
  return (*stmt)->column_double(0);
}

Result<void> raise_inflation(SqliteDb& writer, double value) {
  auto stmt = writer.statement(k_raise_inflation_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind_double(1, value);
  return (*stmt)->run("raising the eviction inflation value");
}

Result<void> fill_missing_priorities(SqliteDb& writer, double inflation) {
  static const std::string sql =
      "UPDATE entries SET priority = " + gdsf_priority_sql("?1", "hits") + " WHERE priority IS NULL";
  auto stmt = writer.statement(sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind_double(1, inflation);
  return (*stmt)->run("giving entries without one their eviction priority");
}

}  // namespace jitcache::daemon::store
