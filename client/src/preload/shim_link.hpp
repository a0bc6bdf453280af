// The shim this core serves (client/src/preload_shim/shim_interface.h): libjitcache-preload.so,
// the small object a program preloads, which loads this core the first time a hooked call needs
// the cache and hands it the loader's view from the shim's place in the search order.
//
// Thread safety: attach_shim runs once per process (core_attach.cpp) before any hook of the core
// can be reached, since every hook is reached through the shim's stubs after it; everything here
// is constant afterwards and read without locks.
#pragma once

#include <client/src/preload_shim/shim_interface.h>

#include <span>

#include <client/src/preload/hook.hpp>

namespace jitcache::client::preload {

const jitcache_shim& shim();

// The shim's exported function that stands for `hook` (what a program is handed), or nullptr when
// the shim exports no such name.
void* stub_of(const Hook& hook);
// The hook whose stub or core function `address` is, or nullptr.
const Hook* hook_at(const void* address);
// The hook of exported name `symbol`, or nullptr (a table lookup).
const Hook* hook_named(const char* symbol);
// The driver hooks that cuGetProcAddress hands out for `base` ("cuLinkCreate": both ABIs); empty for
// nearly every name, after a compare of its first characters.
std::span<const Hook* const> hooks_of_base(const char* base);

}  // namespace jitcache::client::preload
