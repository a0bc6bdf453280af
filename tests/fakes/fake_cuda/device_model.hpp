// The one device and the driver the fake models: compute capability → the JIT's default target and
// what cubins/PTX it accepts; driver API version → the newest PTX ISA its JIT compiles.
//
// Rules from docs/driver-facts.md §1 (the context's JIT target on CC >= 9.0 is the `a` variant,
// [E] sm_90a on the H200), §2 "Compatibility" (PTX ISA per CUDA release) and §3 (which images run).
// Thread safety: pure functions.
#pragma once

#include <client/src/fatbin/fatbin_entry.hpp>
#include <client/src/fatbin/select_image.hpp>

#include <optional>
#include <string_view>

namespace jitcache::fakes::fake_cuda {

namespace fb = jitcache::client::fatbin;

// 10 * major + minor, as FAKE_CUDA_CC spells it: 90 = CC 9.0, 100 = CC 10.0, 86 = CC 8.6.
inline constexpr unsigned k_default_cc = 90;
inline constexpr int k_default_driver_version = 13000;

// "90", "100", "9.0", "10.3" → 90, 100, 90, 103; nullopt for anything else or a CC below 3.0.
std::optional<unsigned> parse_cc(std::string_view text);

// What CU_JIT_TARGET_FROM_CUCONTEXT means on this device: sm_XY, or sm_XYa from CC 9.0 on.
fb::Arch context_jit_target(unsigned cc);

// The device as the fat binary walker sees it: arch-specific code from 9.0 on, family code from 10.0.
fb::DeviceTarget device_target(unsigned cc);

// The newest PTX ISA the driver's JIT accepts: 13000 → 9.0, 12090 → 8.8, 12080 → 8.7 … 11000 → 7.0.
fb::PtxIsa max_ptx_isa(int driver_version);

// An image built for `target` (the arch a cubin was generated for) can run on the device.
bool cubin_runs_on_device(const fb::Arch& target, unsigned cc);

}  // namespace jitcache::fakes::fake_cuda
