// Giving back what a large request held once it ends (docs/architecture.md "Threads", "Memory"): the heap
// settings the daemon starts with, and a trim after any request whose payload was large.
//
// Rationale: LOOKUP images up to k_heap_buffer_bytes come from the heap and are reused from there
// (a fresh mapping per hit, faulted in page by page, cost a quarter of the daemon's CPU for 190 KB
// and 1.6 MB images: docs/benchmarks.md). A larger buffer is a mapping of its own, unmapped when
// freed, and the heap is trimmed after a request of k_trim_after_bytes or more, so a burst of one
// uid's large requests (60 MiB PUTs, 40 MiB COMPILEs refused) does not leave the daemon holding
// hundreds of MiB when nothing is stored or in flight: before, M_MMAP_THRESHOLD 64 MiB and
// M_TRIM_THRESHOLD 256 MiB kept every payload under 64 MiB on the heaps, 461 MB after a few
// seconds of them (tests/bench/bench_tenant_attack.cpp measures it).
//
// Thread safety: keep_small_buffers_on_the_heap() once at start-up, before threads; the trim from
// any thread.
#pragma once

#include <cstddef>

namespace jitcache::daemon::server {

inline constexpr std::size_t k_heap_buffer_bytes = 8u << 20;  // M_MMAP_THRESHOLD
inline constexpr std::size_t k_heap_keep_bytes = 8u << 20;    // M_TRIM_THRESHOLD
inline constexpr std::size_t k_trim_after_bytes = 4u << 20;

void keep_small_buffers_on_the_heap();

// After a request whose payload took `payload_bytes` has freed it: returns the heaps' free memory
// to the system when the payload was k_trim_after_bytes or more.
void return_memory_after(std::size_t payload_bytes);

}  // namespace jitcache::daemon::server
