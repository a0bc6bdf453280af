// Which driver build is loaded, for the cache key's driver field (docs/cache-key.md
// "The fields", docs/driver-facts.md §0.3, §5).
//
// cuDriverGetVersion says only the API level (13000); the JIT's output follows the user-mode driver
// build. The most direct witness is the file the process actually loaded: the realpath of
// libcuda.so.1 is named after its build (libcuda.so.580.159.04), which stays true under
// forward-compatibility installs where /proc/driver/nvidia/version shows only the kernel module.
// /proc is the fallback for a library whose name carries no version.
// Thread safety: pure functions apart from reading /proc.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jitcache::client::driver {

struct DriverIdentity {
  std::string library_path;  // realpath of the loaded driver library
  std::string build;         // "580.159.04", or "unknown" when nothing names it
};

// `symbol` is any address inside the loaded driver library.
DriverIdentity identify_driver(const void* symbol);

// "580.159.04" from ".../libcuda.so.580.159.04"; nullopt when the file name carries no version.
std::optional<std::string> build_from_library_name(std::string_view path);

// "580.159.04" from the first line of /proc/driver/nvidia/version.
std::optional<std::string> build_from_proc_version(std::string_view text);

// The newest PTX ISA a driver of this API version JIT-compiles (13000 → 9.0, 12080 → 8.7), from the
// PTX release table in docs/driver-facts.md §2; for a 13.x minor newer than the table, 9.<minor> [I].
struct PtxIsaVersion {
  unsigned major = 0;
  unsigned minor = 0;
};
PtxIsaVersion max_ptx_isa(int driver_api_version);

}  // namespace jitcache::client::driver
