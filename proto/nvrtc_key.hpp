// The key of an NVRTC compile (docs/cache-key.md "NVRTC compiles"):
//
//   content       SHA-256 over a tagged, length-prefixed preimage of: the NVRTC identity (version
//                 and the XXH3-128 of libnvrtc and of the libnvrtc-builtins it loads), the program's
//                 name, its source, every header passed at create (name and content, in order), the
//                 options verbatim in order (nvrtc_options.hpp), the name expressions in the order
//                 they were added, the include record (what every path the compile may read held:
//                 client/src/nvrtc/include_scan.hpp), and the working directory when the output may
//                 name it (-G, -lineinfo)
//   arch          from -arch ("sm_90" for compute_90 too), else NVRTC's default; descriptive only:
//                 the options in the content decide
//   driver        1000 * major + 10 * minor of nvrtcVersion; "nvrtc-<major>.<minor>-<first 16 hex
//                 digits of the library digest>"
//   options       "compiler=nvrtc" (jit_options.hpp)
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>
#include <proto/key.hpp>
#include <proto/nvrtc_options.hpp>

namespace jitcache::proto {

struct NvrtcIdentity {
  int major = 0;
  int minor = 0;
  // XXH3-128 of the libnvrtc file and of the libnvrtc-builtins file it loads. Rationale: hashing
  // the ~110 MB library with SHA-256 cost 0.55 s per process on the 2-core CI machine, XXH3 runs at
  // memory speed; the library is the caller's own code in the caller's process (an adversary who
  // crafts a colliding libnvrtc already runs code there, and its PUTs reach only its own namespace
  // unless its uid is trusted), so no collision resistance is needed here. The source, headers and
  // include files, which other tenants' inputs may be, stay SHA-256.
  Checksum128 library;
  Checksum128 builtins;
};

struct NvrtcCompileInput {
  NvrtcIdentity identity;
  std::string name;
  std::string source;
  std::vector<std::pair<std::string, std::string>> headers;  // (include name, content)
  NvrtcOptions options;
  std::vector<std::string> name_expressions;
  std::string include_record;
  std::string working_directory;  // empty unless options.debug_info
};

struct NvrtcKey {
  KeyFields fields;
  Checksum128 content_fast;  // XXH3-128 of the same preimage: the fast key every PUT carries
};

// The key, validated as the daemon will (proto::validate_key).
common::Result<NvrtcKey> nvrtc_key(const NvrtcCompileInput& input);

// The key of the same compile relative to its program's directory (nvrtc_program_directory.hpp):
// the name's last part and `relative_record` (record_relative_to_program) in place of the name and
// the record, under a preimage of its own kind, so it never equals a key with the name.
common::Result<NvrtcKey> nvrtc_program_relative_key(const NvrtcCompileInput& input, std::string_view relative_record);

}  // namespace jitcache::proto
