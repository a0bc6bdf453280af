// `jitcache explain --source FATBIN`: the keys libjitcache builds for a fat binary file on a device
// of the given arch, one per container the file holds. The fat binary is walked as a load walks it
// (warm_sources.hpp, which `jitcache warm` uses too), so the key explained is the one a program on
// that device looks up: the PTX entry the walk selects, its embedded ptxas options merged with
// --options, and the arch that device's JIT targets (KeyBuilder::for_device), not --arch as typed.
// Thread safety: free functions over the file system; single-threaded like the CLI.
#pragma once

#include <string>
#include <vector>

#include <client/cli/key_input.hpp>
#include <common/result.hpp>
#include <proto/key.hpp>

namespace jitcache::client::cli {

// True when the file starts with a fat binary container's magic (client/src/fatbin/fatbin_format.hpp).
bool is_fat_binary_file(const std::string& path);

struct FatBinaryKey {
  std::string label;  // the file and the entry chosen ("k.fatbin [compute_90 PTX 9.0]")
  proto::KeyFields key;
};

// One key per container with PTX to JIT for the device; an error when none has any (a cubin the
// device runs, nothing it can use), saying why, or when --arch, --driver or --options are bad.
common::Result<std::vector<FatBinaryKey>> fat_binary_keys(const KeyInput& input);

}  // namespace jitcache::client::cli
