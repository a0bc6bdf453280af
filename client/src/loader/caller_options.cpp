#include <client/src/loader/caller_options.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace jitcache::client::loader {

namespace {

bool is_output_option(CUjit_option option) {
  switch (option) {
    case CU_JIT_WALL_TIME:
    case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
    case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
    case CU_JIT_THREADS_PER_BLOCK: return true;
    default: return false;
  }
}

std::uintptr_t slot_integer(const void* slot) { return reinterpret_cast<std::uintptr_t>(slot); }

}  // namespace

CallerOptions::CallerOptions(unsigned count, CUjit_option* options, void** values)
    : m_count(count), m_options(options), m_values(values) {
  if (well_formed() && count > 0) m_original.assign(values, values + count);
}

OptionArrays CallerOptions::as_given() const {
  OptionArrays arrays;
  if (m_count > 0 && well_formed()) {
    arrays.options.assign(m_options, m_options + m_count);
    arrays.values = m_original;
  }
  return arrays;
}

OptionArrays CallerOptions::with(const std::vector<key::JitOptionValue>& extra, bool for_link) const {
  OptionArrays arrays = as_given();
  if (for_link) {
    for (std::size_t i = arrays.options.size(); i-- > 0;) {
      if (arrays.options[i] == CU_JIT_FALLBACK_STRATEGY) {
        arrays.options.erase(arrays.options.begin() + static_cast<std::ptrdiff_t>(i));
        arrays.values.erase(arrays.values.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }
  for (const key::JitOptionValue& option : extra) {
    arrays.options.push_back(option.option);
    arrays.values.push_back(reinterpret_cast<void*>(option.value));
  }
  return arrays;
}

int CallerOptions::index_of(CUjit_option option) const {
  if (!well_formed()) return -1;
  for (unsigned i = 0; i < m_count; ++i) {
    if (m_options[i] == option) return static_cast<int>(i);
  }
  return -1;
}

const void* CallerOptions::value_of(CUjit_option option) const {
  int i = index_of(option);
  return i < 0 ? nullptr : m_original[static_cast<unsigned>(i)];
}

void CallerOptions::publish(const OptionArrays& used) const {
  if (!well_formed()) return;
  for (unsigned i = 0; i < m_count; ++i) {
    if (!is_output_option(m_options[i])) continue;
    for (std::size_t j = 0; j < used.options.size(); ++j) {
      if (used.options[j] == m_options[i]) {
        m_values[i] = used.values[j];
        break;
      }
    }
  }
}

void CallerOptions::fill_logs(std::string_view info, std::string_view error, float wall_ms) const {
  if (!well_formed()) return;
  auto write = [&](CUjit_option buffer_option, CUjit_option size_option, std::string_view text) {
    int buffer_index = index_of(buffer_option);
    int size_index = index_of(size_option);
    if (buffer_index < 0 || size_index < 0) return;
    char* buffer = static_cast<char*>(m_original[static_cast<unsigned>(buffer_index)]);
    std::uintptr_t capacity = slot_integer(m_original[static_cast<unsigned>(size_index)]);
    std::uintptr_t written = 0;
    if (buffer != nullptr && capacity > 0) {
      std::size_t n = std::min<std::size_t>(text.size(), capacity - 1);
      std::memcpy(buffer, text.data(), n);
      buffer[n] = '\0';
      written = n == 0 ? 0 : n + 1;
    }
    m_values[static_cast<unsigned>(size_index)] = reinterpret_cast<void*>(written);
  };
  // Rationale: the driver writes nothing into the info log of a load it does not verbosely JIT (an
  // empty string); a caller whose declared size is larger than its buffer survives the driver
  // and must survive us. The cache's line is written only when asked for with CU_JIT_LOG_VERBOSE.
  write(CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        slot_integer(value_of(CU_JIT_LOG_VERBOSE)) != 0 ? info : std::string_view());
  write(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, error);
  if (int i = index_of(CU_JIT_WALL_TIME); i >= 0) {
    // The driver returns the wall time as a float stored in the slot's bytes (docs/driver-facts.md §1).
    void* slot = nullptr;
    std::memcpy(&slot, &wall_ms, sizeof(wall_ms));
    m_values[static_cast<unsigned>(i)] = slot;
  }
}

std::string_view CallerOptions::error_log() const {
  const char* buffer = static_cast<const char*>(value_of(CU_JIT_ERROR_LOG_BUFFER));
  if (buffer == nullptr) return {};
  std::uintptr_t capacity = slot_integer(value_of(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES));
  if (capacity == 0) return {};
  return std::string_view(buffer, strnlen(buffer, capacity));
}

}  // namespace jitcache::client::loader
