// The object behind a CUlinkState: one nvJitLink session plus the caller's output slots, which the
// driver keeps writing for the life of the state (logs and wall time accumulate until cuLinkDestroy,
// docs/driver-facts.md §1, so the caller's optionValues array must outlive the state).
//
// cuLinkAddData(PTX) compiles eagerly, as nvJitLink and the driver do: a PTX error is reported by
// the add that brought it. After a failed add, cuLinkComplete repeats that failure [I] rather than
// linking the useless rest (nvJitLink itself would "succeed", docs/driver-facts.md §2).
// Thread safety: one state is used by one thread at a time, as the driver requires of a CUlinkState;
// LinkRegistry may be used from any thread.
#pragma once

#include <tests/fakes/fake_cuda/counters.hpp>
#include <tests/fakes/fake_cuda/jit_linker.hpp>
#include <tests/fakes/fake_cuda/jit_options.hpp>

#include <client/src/fatbin/select_image.hpp>

#include <cuda.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace jitcache::fakes::fake_cuda {

class LinkState {
 public:
  LinkState(const JitRequest& request, const fb::Arch& target);

  // CUDA_SUCCESS when nvJitLink accepted the options.
  CUresult create_status() const;
  CUresult add_ptx(std::string_view ptx, const char* name, const fb::PtxIsa& max_isa, Counters& counters);
  CUresult add_binary(nvJitLinkInputType type, std::span<const std::byte> data, const char* name);
  // The cubin stays owned by the state until it is destroyed.
  CUresult complete(void** cubin_out, std::size_t* size_out, Counters& counters);
  // An input refused before it reached the compiler (malformed cubin, unsupported input type).
  CUresult refuse(CUresult code, std::string_view reason);
  // An injected failure at `point` (FAKE_CUDA_FAIL), reported through the error log like a real one.
  CUresult fail(CUresult code, std::string_view point);
  // Everything that went wrong so far, as written into CU_JIT_ERROR_LOG_BUFFER.
  const std::string& error_log() const { return m_error_log; }

 private:
  CUresult failed(CUresult code, std::string_view log);
  void add_wall_time(float milliseconds);
  void publish_logs() const;

  JitRequest m_request;
  JitLinker m_linker;
  std::string m_error_log;
  std::string m_info_log;
  float m_wall_ms = 0.0f;
  std::optional<CUresult> m_failure;
  bool m_has_input = false;
  bool m_completed = false;
};

class LinkRegistry {
 public:
  CUlinkState add(std::unique_ptr<LinkState> state);
  // nullptr for a handle that is not a live link state.
  LinkState* find(CUlinkState handle) const;
  CUresult remove(CUlinkState handle);

 private:
  mutable std::mutex m_mutex;
  std::map<CUlinkState, std::unique_ptr<LinkState>> m_states;
};

}  // namespace jitcache::fakes::fake_cuda
