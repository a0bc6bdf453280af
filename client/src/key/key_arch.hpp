// The arch field of the cache key: the target the driver's JIT generates code for
// (docs/cache-key.md "The fields").
//
// Rules, in order:
//   1. CU_JIT_TARGET, when the caller passes it, names the SM; otherwise the device's CC does
//      (CU_JIT_TARGET_FROM_CUCONTEXT, the driver's default).
//   2. A variant the target option names (sm_90a, sm_100f) is kept.
//   3. Else a variant the PTX `.target` names for that same SM is kept: PTX built for sm_90a
//      compiles only as sm_90a (docs/driver-facts.md §8).
//   4. Else, when the SM is the device's own and the device is CC 9.0 or newer, the driver generates
//      the arch-specific variant: on the H200 its JIT output reads `-arch sm_90a` both with the
//      context target and with CU_JIT_TARGET=90 (docs/driver-facts.md §1; observed on 9.0, assumed for newer
//      devices [I]).
// Thread safety: pure function.
#pragma once

#include <optional>
#include <string>

#include <client/src/driver/device_query.hpp>
#include <client/src/fatbin/fatbin_entry.hpp>

namespace jitcache::client::key {

// `target_option` is the canonicaliser's target_arch ("sm_80", "sm_90a"); `ptx_target` the PTX's.
std::string key_arch(const driver::ComputeCapability& device, const std::optional<std::string>& target_option,
                     const std::optional<fatbin::Arch>& ptx_target);

}  // namespace jitcache::client::key
