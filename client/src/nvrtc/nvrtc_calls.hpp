// The NVRTC calls as libjitcache-preload.so's wrappers make them (client/src/preload/
// nvrtc_hooks.cpp): the real functions of the library the program called, the program's
// arguments, and the process's NvrtcProgram of the handle (nvrtc_program.hpp). A handle without
// one (caching disabled, a failed create, a program created before the preload was active) gets
// the real call, unchanged. Nothing here throws.
// Thread safety: safe from any thread.
#pragma once

#include <cstddef>

#include <client/src/nvrtc/nvrtc_entry_points.hpp>
#include <proto/nvrtc_result.hpp>

namespace jitcache::client::nvrtc {

nvrtcResult nvrtc_create(const NvrtcEntryPoints& real, nvrtcProgram* program, const char* source, const char* name,
                         int header_count, const char* const* headers, const char* const* include_names);
nvrtcResult nvrtc_destroy(const NvrtcEntryPoints& real, nvrtcProgram* program);
nvrtcResult nvrtc_add_name_expression(const NvrtcEntryPoints& real, nvrtcProgram program, const char* expression);
nvrtcResult nvrtc_compile(const NvrtcEntryPoints& real, nvrtcProgram program, int count, const char* const* options);
nvrtcResult nvrtc_output_size(const NvrtcEntryPoints& real, nvrtcProgram program, proto::NvrtcOutput which,
                              std::size_t* size);
nvrtcResult nvrtc_output_bytes(const NvrtcEntryPoints& real, nvrtcProgram program, proto::NvrtcOutput which, char* out);
nvrtcResult nvrtc_lowered_name(const NvrtcEntryPoints& real, nvrtcProgram program, const char* expression,
                               const char** lowered);

std::size_t nvrtc_programs_alive();

}  // namespace jitcache::client::nvrtc
