// The first two stages of keying an image (docs/client-guide.md §4 steps 1-2): classify what
// cuModuleLoadData was handed, and find the PTX a load of it would JIT on a device — the PTX text
// itself, or the entry a fat binary walk selects with the ptxas options stored beside it. A cubin,
// or a fat binary holding a cubin the device runs, has nothing to key: the driver loads it as given.
//
// libjitcache's load flow and `jitcache warm` both start here, so a warmed key is the one a program
// on that device looks up. Each caller words the outcome its own way (a load record, a warm
// summary line); `NoSource` says which case it was.
// Thread safety: pure functions; `device` is called on the calling thread, at most once.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <client/src/driver/device_query.hpp>
#include <client/src/fatbin/select_image.hpp>
#include <client/src/key/embedded_ptxas_options.hpp>

namespace jitcache::client::key {

// The PTX a key is computed from and a JIT compiles.
struct PtxSource {
  std::string_view borrowed;             // PTX text in the caller's image, without its NUL
  std::optional<std::string> copy;       // a fat binary entry's PTX, copied so it ends in a NUL
  std::vector<JitOptionValue> embedded;  // the ptxas options of a fat binary entry
  std::string_view text() const { return copy ? std::string_view(*copy) : borrowed; }
  // cuLinkAddData needs a NUL: PTX handed over as text has one, an entry's copy too.
  const char* nul_terminated() const { return copy ? copy->c_str() : borrowed.data(); }
};

// Why an image has no PTX to key.
enum class NoSource {
  unrecognised,         // neither a cubin, a fat binary nor PTX (`detail`: the classifier's message)
  cubin,                // a cubin: nothing to compile
  fatbin_unreadable,    // a fat binary the walker does not understand (`detail`: why)
  no_device,            // a fat binary, and no device to select an image for
  no_image_for_device,  // a fat binary with nothing the device can use (`detail`: the entries)
  cubin_for_device,     // a fat binary holding a cubin the device runs
  embedded_options,     // the chosen PTX's ptxas options have no exact JIT option (`detail`: which)
};

struct ImageSource {
  std::optional<NoSource> none;  // set: no PTX to key, and why
  std::string detail;            // the message behind `none`, when it has one
  std::string entry;             // a fat binary's chosen entry, described ("compute_90 PTX 9.0 (zstd)")
  PtxSource ptx;                 // when `none` is not set
  // The device `device` returned, when the walk needed it.
  std::optional<driver::ComputeCapability> device;
};

// The fat binary walk's view of a device: arch-specific targets exist from CC 9.0, family
// targets from CC 10.0 (docs/driver-facts.md §1, §3).
fatbin::DeviceTarget device_target(const driver::ComputeCapability& cc);

// The device an image is for, asked only for a fat binary (the walk needs it); nullopt: none.
using DeviceQuery = std::function<std::optional<driver::ComputeCapability>()>;

// `image` is what cuModuleLoadData would receive: PTX text ending in a NUL, a cubin, a fat binary
// or an nvcc wrapper. `max_ptx` is the newest PTX ISA the driver JIT-compiles (driver_identity.hpp).
// The returned source borrows from `image` (plain PTX), so `image` must outlive it.
ImageSource find_source(const void* image, const DeviceQuery& device, const fatbin::PtxIsa& max_ptx);

}  // namespace jitcache::client::key
