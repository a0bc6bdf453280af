// What /proc says about another process (the real daemon child): memory figures from
// /proc/<pid>/status, its open descriptors and its descriptor limit, for tests that assert on
// what an operator would see. Thread safety: free functions.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace jitcache::testing {

// A "<field>: <n> kB" line of /proc/<pid>/status (VmRSS, VmHWM, ...), in bytes; throws when absent.
std::uint64_t status_bytes(pid_t pid, const std::string& field);
// Entries of /proc/<pid>/fd.
std::size_t open_descriptors(pid_t pid);
// The soft and hard "Max open files" of /proc/<pid>/limits.
struct DescriptorLimit {
  std::uint64_t soft = 0;
  std::uint64_t hard = 0;
};
DescriptorLimit descriptor_limit(pid_t pid);

}  // namespace jitcache::testing
