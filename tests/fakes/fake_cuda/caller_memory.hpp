// Reads memory the caller pointed us at without trusting that it is all there.
//
// cuModuleLoadData gets a pointer and no size. The real driver reads as far as the image's own headers
// claim and may crash on a truncated cubin (docs/driver-facts.md §0.1); the fake must instead *notice* the
// truncation and answer CUDA_ERROR_INVALID_IMAGE (or abort on purpose, FAKE_CUDA_CRASH_ON_TRUNCATED), so
// every read of caller memory goes through process_vm_readv on our own pid, which reports an unmapped
// or PROT_NONE page as EFAULT instead of delivering SIGSEGV. Where the kernel refuses that call
// (seccomp profiles without CAP_SYS_PTRACE) the copy goes through a pipe, which faults the same way.
// Thread safety: pure functions (the fallback decision is a relaxed atomic flag).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace jitcache::fakes::fake_cuda {

// True when all `size` bytes at `source` were readable and are now in `out`.
bool copy_from_caller(const void* source, std::size_t size, void* out);

// The `size` bytes at `source`, or nullopt when any of them is unreadable.
std::optional<std::vector<std::byte>> caller_bytes(const void* source, std::size_t size);

// The NUL-terminated string at `source` (without its NUL), or nullopt when memory ends before a NUL
// or no NUL comes within `max_length` bytes.
std::optional<std::string> caller_string(const void* source, std::size_t max_length);

}  // namespace jitcache::fakes::fake_cuda
