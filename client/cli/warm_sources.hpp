// What `jitcache warm` compiles: the PTX sources found under the paths it was given. A PTX file is one
// source; a fat binary is walked by the same code as libjitcache's load (client/src/key/image_source.hpp)
// for a device of the target arch, giving the PTX entry that load would JIT (none when the fat binary
// holds a cubin that device runs: nothing to warm); a directory is searched recursively for *.ptx
// and *.fatbin.
// A path that cannot be used becomes a source with an error, so the summary can list it.
// Thread safety: free functions over the file system; single-threaded like the CLI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <client/src/driver/device_query.hpp>
#include <client/src/fatbin/select_image.hpp>
#include <client/src/key/embedded_ptxas_options.hpp>

namespace jitcache::client::cli {

struct WarmSource {
  std::string label;                          // the file, plus the fat binary entry ("a.fatbin [compute_90 PTX 9.0]")
  std::string ptx;                            // the PTX text, without a trailing NUL
  std::vector<key::JitOptionValue> embedded;  // a fat binary entry's ptxas options
  std::string error;                          // not empty: this path gives nothing to compile, and why
  bool nothing_to_do = false;                 // a fat binary with a cubin for the device: nothing to warm
};

// `device` and `max_ptx` stand for the GPU and driver the entries are warmed for.
std::vector<WarmSource> collect_warm_sources(const std::vector<std::string>& paths,
                                             const driver::ComputeCapability& device, const fatbin::PtxIsa& max_ptx);

}  // namespace jitcache::client::cli
