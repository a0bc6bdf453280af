// Chooses, from a parsed fat binary, the image the driver would use on a given device: a cubin the
// device can run is loaded directly; otherwise the best PTX the driver can JIT (with the ptxas
// options embedded beside it); otherwise there is no image for this device.
//
// Rules (docs/driver-facts.md §3 "How the driver picks an image"):
//   - cubin sm_XY runs on CC X.Z for Z >= Y (same major, same or later minor);
//     sm_XYa only on CC X.Y, and only where the device offers arch-specific targets;
//     sm_XYf on CC X.Z for Z >= Y where the device offers family targets.
//   - PTX compute_XY is JIT-compiled for any CC >= X.Y; compute_XYa only on X.Y, compute_XYf only
//     within the family, as for cubins; and only when its PTX ISA version is at most what the driver
//     can JIT.
//   - Among runnable cubins: the highest SM first (an exact match beats an earlier minor), then
//     arch-specific over plain over family at the same SM, as the most specific build for the device.
//   - Among usable PTX: the highest target SM, then the higher variant as above, then the higher ISA.
//   - LTO-IR and unknown entries are never chosen (cuModuleLoadData cannot load them).
// Which of two runnable cubins the driver prefers, and whether CU_PREFER_PTX makes it JIT PTX
// instead of running an earlier-minor cubin, is not verified on hardware [I]; we follow
// docs/fatbin.md "How an image is chosen".
// Thread safety: pure functions.
#pragma once

#include <client/src/fatbin/fatbin_entry.hpp>
#include <common/result.hpp>

#include <cstddef>
#include <span>

namespace jitcache::client::fatbin {

struct DeviceTarget {
  unsigned major = 0;  // compute capability
  unsigned minor = 0;
  bool arch_specific = false;  // the device accepts sm_XYa / compute_XYa built for exactly its CC
  bool family = false;         // the device accepts sm_XYf / compute_XYf of its family
};

// The newest PTX ISA version the driver's JIT accepts (e.g. 9.0 for a CUDA 13.0 driver).
struct PtxIsa {
  unsigned major = 0;
  unsigned minor = 0;
};

enum class Action { load_cubin, jit_ptx };

struct Selection {
  Action action = Action::load_cubin;
  std::size_t entry_index = 0;  // into the span given to select_image
};

bool cubin_runs_on(const Arch& arch, const DeviceTarget& device);
bool ptx_targets(const Arch& arch, const DeviceTarget& device);

// No usable image → ErrorCode::unsupported with a message that names the device, the driver's PTX
// ISA limit, and every entry the fat binary holds ("no image for this device (CC 9.0): the fat binary
// holds sm_80 cubin").
common::Result<Selection> select_image(std::span<const Entry> entries, const DeviceTarget& device,
                                       const PtxIsa& max_ptx);

}  // namespace jitcache::client::fatbin
