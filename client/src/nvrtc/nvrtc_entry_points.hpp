// The NVRTC functions a program's calls go to, found in the library the program called (one
// library's set: a process may hold two NVRTCs). nvrtc.h is read for its types only; nothing links
// NVRTC. A member is null when the library lacks the function (OptiX-IR before 12.0, say).
// Thread safety: plain data.
#pragma once

#include <nvrtc.h>

#include <cstddef>

namespace jitcache::client::nvrtc {

using SizeCall = nvrtcResult (*)(nvrtcProgram, std::size_t*);
using BytesCall = nvrtcResult (*)(nvrtcProgram, char*);

struct NvrtcEntryPoints {
  nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  nvrtcResult (*destroy)(nvrtcProgram*) = nullptr;
  nvrtcResult (*add_name_expression)(nvrtcProgram, const char*) = nullptr;
  nvrtcResult (*compile)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*get_lowered_name)(nvrtcProgram, const char*, const char**) = nullptr;
  nvrtcResult (*version)(int*, int*) = nullptr;
  // The outputs in proto::NvrtcOutput's order: log, PTX, CUBIN, LTO-IR, OptiX-IR.
  SizeCall size_of[5] = {};
  BytesCall bytes_of[5] = {};
};

}  // namespace jitcache::client::nvrtc
