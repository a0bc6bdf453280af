// One nvJitLink session: the fake's stand-in for the driver's JIT, producing real cubins.
//
// nvJitLink compiles PTX eagerly inside add() (docs/driver-facts.md §2), which is where PTX errors surface, and
// needs no GPU or driver. The logs are read back after each step, so a caller can copy the error log
// of the step that failed.
// Thread safety: one object per thread at a time; independent sessions may run concurrently.
#pragma once

#include <client/src/fatbin/fatbin_entry.hpp>

#include <nvJitLink.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace jitcache::fakes::fake_cuda {

namespace fb = jitcache::client::fatbin;

class JitLinker {
 public:
  // `-arch=` comes from `target`; `options` are further nvJitLink options. Check created() after.
  JitLinker(const fb::Arch& target, const std::vector<std::string>& options);
  ~JitLinker();
  JitLinker(const JitLinker&) = delete;
  JitLinker& operator=(const JitLinker&) = delete;

  nvJitLinkResult create_result() const { return m_create_result; }
  bool created() const { return m_handle != nullptr; }

  nvJitLinkResult add(nvJitLinkInputType type, std::span<const std::byte> data, const char* name);
  nvJitLinkResult complete();
  // The linked cubin after a successful complete().
  const std::vector<std::byte>& cubin() const { return m_cubin; }

  std::string error_log() const;
  std::string info_log() const;

 private:
  nvJitLinkHandle m_handle = nullptr;
  nvJitLinkResult m_create_result = NVJITLINK_SUCCESS;
  std::vector<std::byte> m_cubin;
};

// "-arch=sm_90a" for {90, arch_specific}.
std::string nvjitlink_arch_option(const fb::Arch& target);

}  // namespace jitcache::fakes::fake_cuda
