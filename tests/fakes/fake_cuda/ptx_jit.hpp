// The fake driver's PTX JIT: the checks the driver makes before compiling (PTX ISA against the driver's
// JIT, `.target` against the JIT target) and the compile itself with nvJitLink, with nvJitLink's
// outcome mapped to the CUresult the driver gives (docs/driver-facts.md §4): 222 for an ISA newer than the JIT,
// 218 for PTX the compiler rejects or cannot build for the target, 1 for options it does not take.
// Thread safety: pure functions; each compile has its own nvJitLink session.
#pragma once

#include <tests/fakes/fake_cuda/jit_linker.hpp>
#include <tests/fakes/fake_cuda/ptx_header.hpp>

#include <client/src/fatbin/select_image.hpp>

#include <cuda.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::fakes::fake_cuda {

struct JitFailure {
  CUresult code = CUDA_SUCCESS;
  std::string log;  // worded like the driver's ptxas, so a test can see which check fired
};

// 222 when the PTX ISA is newer than the driver's JIT.
std::optional<JitFailure> check_ptx_version(const PtxHeader& header, const fb::PtxIsa& max_isa);
// 218 when PTX written for `.target` cannot be compiled for `target` (sm_100 PTX for sm_90a, sm_90a PTX
// for plain sm_90).
std::optional<JitFailure> check_ptx_target(const PtxHeader& header, const fb::Arch& target);

// What an nvJitLink failure means to a driver caller. `ptx_input`: the step compiled PTX (218/222),
// otherwise it linked binary input (200).
CUresult result_for_nvjitlink(nvJitLinkResult result, bool ptx_input, std::string_view error_log);

struct CompileOutcome {
  CUresult code = CUDA_SUCCESS;
  std::vector<std::byte> cubin;
  std::string info_log;
  std::string error_log;
};

// Compiles and links one PTX text into an executable cubin for `target`.
CompileOutcome compile_ptx(std::string_view ptx, const fb::Arch& target, const std::vector<std::string>& options);

}  // namespace jitcache::fakes::fake_cuda
