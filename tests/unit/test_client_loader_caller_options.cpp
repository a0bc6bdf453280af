// The caller's option arrays (client/src/loader/caller_options): every driver call gets the caller's
// original values, output slots are published back, and on a cache hit the log buffers and wall
// time are filled as the driver would fill them.
#include <client/src/loader/caller_options.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>

namespace ld = jitcache::client::loader;

namespace {
void* integer_slot(std::uintptr_t v) { return reinterpret_cast<void*>(v); }
std::uintptr_t slot_value(void* slot) { return reinterpret_cast<std::uintptr_t>(slot); }
}  // namespace

TEST_CASE("caller options: a hit fills the logs, cut to capacity, and the wall time as a float") {
  char info[16];
  char error[8] = "junk";
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_WALL_TIME,        CU_JIT_LOG_VERBOSE};
  void* values[] = {info, integer_slot(sizeof(info)), error, integer_slot(sizeof(error)), nullptr, integer_slot(1)};
  ld::CallerOptions caller(6, options, values);
  caller.fill_logs("jitcache: loaded from the cache", "", 1.5f);
  CHECK(std::string(info) == "jitcache: loade");  // 15 bytes and the NUL
  CHECK(slot_value(values[1]) == 16);
  CHECK(std::string(error).empty());
  CHECK(slot_value(values[3]) == 0);
  float wall = 0;
  std::memcpy(&wall, &values[4], sizeof(wall));
  CHECK(wall == 1.5f);
}

TEST_CASE("caller options: without CU_JIT_LOG_VERBOSE a hit writes only the empty string the driver writes") {
  // A declared size larger than the buffer: only its first byte may be written, as by the driver.
  char buffer[64];
  std::memset(buffer, 'x', sizeof(buffer));
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {buffer, integer_slot(4096)};
  ld::CallerOptions caller(2, options, values);
  caller.fill_logs("jitcache: loaded sm_90a image 0123456789abcdef from the cache (nvJitLink 13.0)", "", 1.0f);
  CHECK(buffer[0] == '\0');
  CHECK(std::string(buffer + 1, sizeof(buffer) - 1) == std::string(sizeof(buffer) - 1, 'x'));
  CHECK(slot_value(values[1]) == 0);
}

TEST_CASE("caller options: each driver call gets the original values, not a previous call's outputs") {
  char log[64];
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_MAX_REGISTERS};
  void* values[] = {log, integer_slot(sizeof(log)), integer_slot(32)};
  ld::CallerOptions caller(3, options, values);

  ld::OptionArrays first = caller.as_given();
  first.values[1] = integer_slot(5);  // what a driver call writes back: bytes used
  caller.publish(first);
  CHECK(slot_value(values[1]) == 5);

  ld::OptionArrays second = caller.as_given();
  CHECK(slot_value(second.values[1]) == sizeof(log));
  CHECK(slot_value(values[2]) == 32);  // an input-only option is never written back
}

TEST_CASE("caller options: the link form drops FALLBACK_STRATEGY and appends embedded options") {
  CUjit_option options[] = {CU_JIT_FALLBACK_STRATEGY, CU_JIT_OPTIMIZATION_LEVEL};
  void* values[] = {integer_slot(CU_PREFER_PTX), integer_slot(3)};
  ld::CallerOptions caller(2, options, values);
  auto link = caller.with({{CU_JIT_MAX_REGISTERS, 64}}, true);
  REQUIRE(link.count() == 2);
  CHECK(link.options[0] == CU_JIT_OPTIMIZATION_LEVEL);
  CHECK(link.options[1] == CU_JIT_MAX_REGISTERS);
  CHECK(slot_value(link.values[1]) == 64);
  CHECK(caller.with({}, false).count() == 2);
}

TEST_CASE("caller options: null arrays with a count are not well formed, none at all is fine") {
  CHECK_FALSE(ld::CallerOptions(2, nullptr, nullptr).well_formed());
  ld::CallerOptions none(0, nullptr, nullptr);
  CHECK(none.well_formed());
  none.fill_logs("x", "y", 1.0f);  // nothing to fill, nothing touched
  CHECK(none.error_log().empty());
}
