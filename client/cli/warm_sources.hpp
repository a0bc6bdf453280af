// What `jitcache warm` compiles: the PTX sources in the files it was given (warm_files.hpp). A PTX
// file is one source; a fat binary, whether a file of its own or one of the containers in a host
// binary's .nv_fatbin and __nv_relfatbin sections, is walked by the same code as libjitcache's load
// (client/src/key/image_source.hpp) for a device of the target arch, giving the PTX entry that load
// would JIT, or nothing when it holds a cubin that device runs. PTX in __nv_relfatbin is relocatable
// device code the CUDA runtime links (cuLink*) when the program starts: it is counted, not warmed.
//
// Sources are produced one at a time, so that a directory of large libraries is warmed without
// holding all of their PTX at once. A file or container that cannot be used becomes a source with
// an error, so the summary can list it; containers that need nothing are only counted.
// Thread safety: free functions over the file system; single-threaded like the CLI.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <client/cli/warm_files.hpp>
#include <client/src/driver/device_query.hpp>
#include <client/src/fatbin/select_image.hpp>
#include <client/src/key/embedded_ptxas_options.hpp>

namespace jitcache::client::cli {

struct WarmSource {
  std::string label;                          // the file, plus the fat binary entry ("a.fatbin [compute_90 PTX 9.0]")
  std::string ptx;                            // the PTX text, without a trailing NUL
  std::vector<key::JitOptionValue> embedded;  // a fat binary entry's ptxas options
  std::string error;                          // not empty: this gives nothing to compile, and why
  bool nothing_to_do = false;                 // a cubin, or a fat binary with a cubin for the device
};

// What was found besides the sources, for the summary.
struct WarmTally {
  std::size_t host_binaries = 0;        // ELF executables and shared libraries read
  std::size_t fat_binaries = 0;         // fat binary files and containers in host binaries
  std::size_t cubin_for_device = 0;     // fat binaries holding a cubin the device runs: nothing to JIT
  std::size_t no_image_for_device = 0;  // containers in host binaries with nothing the device can use
  // __nv_relfatbin containers whose PTX the program's device link compiles when it starts (-rdc):
  // that JIT goes through cuLink*, under a link's key, not a module load's, so it is not warmed.
  std::size_t relocatable_ptx = 0;
};

// The device and driver the sources are warmed for.
struct WarmTarget {
  driver::ComputeCapability device;
  fatbin::PtxIsa max_ptx;
};

// Calls `visit` for each source of `file`, in file order, and counts what it found in `tally`.
void visit_warm_sources(const WarmFile& file, const WarmTarget& target, WarmTally& tally,
                        const std::function<void(WarmSource&&)>& visit);

// The sources of the fat binaries in a host binary (warm_binary_sources.cpp).
void visit_host_binary_sources(const WarmFile& file, const WarmTarget& target, WarmTally& tally,
                               const std::function<void(WarmSource&&)>& visit);

}  // namespace jitcache::client::cli
