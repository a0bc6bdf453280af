// The record of one load that jitcache_last_load_info() returns: outcome, reason, key, the stage and
// CUresult of a failure, and the time spent in each step. One per load, kept per thread.
// Thread safety: a LoadRecord belongs to the load that builds it; last_load_info() reads the
// calling thread's own copy.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include <jitcache/jitcache.h>

namespace jitcache::client::loader {

class LoadRecord {
 public:
  LoadRecord();

  void outcome(jitcache_load_outcome outcome) { m_info.outcome = outcome; }
  jitcache_load_outcome outcome() const { return m_info.outcome; }
  // Replaces the reason (cut to the field's size).
  void reason(std::string_view text);
  void append_reason(std::string_view text);
  std::string_view reason() const { return m_info.reason; }
  // The stage of the load walk a failure belongs to and its CUresult; also sets result_name.
  void stage(jitcache_load_stage stage, CUresult result);
  void key(std::string_view key_id_hex, std::string_view arch);

  // Adds the time from construction to destruction to one of the ns_* fields.
  class Step {
   public:
    Step(LoadRecord& record, std::uint64_t jitcache_load_info::*field)
        : m_record(record), m_field(field), m_start(std::chrono::steady_clock::now()) {}
    ~Step() {
      m_record.m_info.*m_field += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - m_start).count());
    }
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;

   private:
    LoadRecord& m_record;
    std::uint64_t jitcache_load_info::*m_field;
    std::chrono::steady_clock::time_point m_start;
  };
  Step step(std::uint64_t jitcache_load_info::*field) { return Step(*this, field); }

  // Milliseconds since the load started (for CU_JIT_WALL_TIME on paths the driver did not time).
  float elapsed_ms() const;

  // Stamps the result and total time and makes this the calling thread's last load.
  void finish(CUresult result);
  // The record as jitcache_last_load_info() shows it once finished.
  const jitcache_load_info& info() const { return m_info; }

 private:
  jitcache_load_info m_info{};
  std::chrono::steady_clock::time_point m_start;
};

// A copy of the calling thread's last finished record (outcome NONE before the first load).
const jitcache_load_info& last_load_info();

}  // namespace jitcache::client::loader
