#include <daemon/server/memory_return.hpp>

#include <malloc.h>

namespace jitcache::daemon::server {

void keep_small_buffers_on_the_heap() {
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(k_heap_buffer_bytes));
  ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(k_heap_keep_bytes));
}

void return_memory_after(std::size_t payload_bytes) {
  if (payload_bytes >= k_trim_after_bytes) ::malloc_trim(0);
}

}  // namespace jitcache::daemon::server
