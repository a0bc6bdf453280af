// The macros NVRTC defines before a compile's first line (its compiler's own and those of its
// built-in header, __nv_nvrtc_builtin_header.h), for the expansion of macro-named includes
// (client/src/nvrtc/macro_named_includes.hpp). NVRTC expands them inside a macro-named include
// (`#define H <v/CUDART_VERSION.h>` reads `v/13000.h`, `<v/__CUDACC_RTC__.h>` reads `v/1.h`, and a
// text's `#ifndef __CUDACC_RTC__ #define __CUDACC_RTC__ x` fallback is not the one in force), and
// their values are NVRTC's, not in any text the scan reads: such an include cannot be named.
//
// The list is NVRTC 13.0's: every identifier in libnvrtc.so and libnvrtc-builtins.so that an
// `#ifdef` found defined under -arch=sm_75, sm_90, compute_100 with -G, -use_fast_math,
// -std=c++11/c++20, -rdc=true, -dopt=on or -default-device (642 names), kept as the families most
// of them belong to (`__CUDA...`, `NV_...`, `cuda[A-Z]...`), which cover the names a later NVRTC
// adds in them, and the rest by name.
// Thread safety: pure functions.
#pragma once

#include <string_view>

namespace jitcache::client::nvrtc {

bool nvrtc_may_predefine(std::string_view name);

// A function-like one among them that a program may well name a header after (`<assert.h>`):
// expanded only before a `(`, so it stands for itself elsewhere.
bool nvrtc_predefines_function_like(std::string_view name);

}  // namespace jitcache::client::nvrtc
