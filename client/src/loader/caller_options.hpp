// The caller's JIT option arrays, kept as given and handed to the driver in the forms each step
// needs, with the output slots published back at the end (cuModuleLoadDataEx's contract).
//
// Why copies: the driver writes output options into the values array it receives (log sizes become
// "bytes written", CU_JIT_WALL_TIME a float). A load may call the driver twice (a local JIT, then a
// plain load as fallback); each call gets a fresh copy of the caller's original values so the second
// does not see the first one's outputs as its inputs, and publish() copies the output slots of the
// call that decided the result into the caller's array. The log buffers themselves are the caller's
// memory and are written directly, by the driver or by fill_logs().
// Thread safety: one object per load.
#pragma once

#include <cuda.h>

#include <string_view>
#include <vector>

#include <client/src/key/embedded_ptxas_options.hpp>

namespace jitcache::client::loader {

struct OptionArrays {
  std::vector<CUjit_option> options;
  std::vector<void*> values;
  unsigned count() const { return static_cast<unsigned>(options.size()); }
  CUjit_option* options_data() { return options.empty() ? nullptr : options.data(); }
  void** values_data() { return values.empty() ? nullptr : values.data(); }
};

class CallerOptions {
 public:
  CallerOptions(unsigned count, CUjit_option* options, void** values);

  unsigned count() const { return m_count; }
  // The arrays exactly as the caller passed them, for handing malformed arguments to the driver.
  CUjit_option* raw_options() const { return m_options; }
  void** raw_values() const { return m_values; }
  bool well_formed() const { return m_count == 0 || (m_options != nullptr && m_values != nullptr); }

  // The caller's options exactly as given (fresh values), for the driver's own load.
  OptionArrays as_given() const;
  // The caller's options plus `extra` (embedded ptxas options), for canonicalisation and cuLink.
  // CU_JIT_FALLBACK_STRATEGY is dropped when `for_link`: cuLinkCreate rejects it, and it only selects
  // an image in a fat binary, which the load walk has already done.
  OptionArrays with(const std::vector<key::JitOptionValue>& extra, bool for_link) const;

  // Copies the output slots (log sizes, wall time, threads per block) of `used` into the caller's
  // array. `used` must be as_given() or with() of this object, after the driver call.
  void publish(const OptionArrays& used) const;

  // For a path where the driver compiled nothing (a cache hit): writes `info` and `error` into the
  // caller's log buffers (cut to their capacity, NUL-terminated), sets the size slots to the bytes
  // written including the NUL (0 for an empty text), and CU_JIT_WALL_TIME to `wall_ms`. `info` is
  // written only when the caller asked for CU_JIT_LOG_VERBOSE; otherwise the info log gets the
  // empty string the driver writes (one byte: a declared size larger than the real buffer is the
  // caller's error, which the driver survives, and so must the cache).
  void fill_logs(std::string_view info, std::string_view error, float wall_ms) const;

  // The text in the caller's error log buffer (after a driver call wrote it), for load records.
  std::string_view error_log() const;

 private:
  const void* value_of(CUjit_option option) const;
  int index_of(CUjit_option option) const;

  unsigned m_count = 0;
  CUjit_option* m_options = nullptr;
  void** m_values = nullptr;
  std::vector<void*> m_original;  // the caller's values as they were on entry
};

}  // namespace jitcache::client::loader
