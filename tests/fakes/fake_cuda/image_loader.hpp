// One image through the driver's load path, for every load entry point (cuModuleLoad*,
// cuLibraryLoad*), as the driver behaves (docs/driver-facts.md §3, §4): classify the image, then load
// a cubin that runs on the device, JIT PTX with nvJitLink, or pick from a fat binary the image the
// driver would pick and do one of those with it.
//
// Outcomes: 200 for a malformed or truncated cubin, fat binary or non-PTX text (abort() instead for a
// cubin when FAKE_CUDA_CRASH_ON_TRUNCATED is set); 209 for a cubin (or fat binary) with nothing for
// this device; 222 for a PTX ISA newer than the driver's JIT; 218 for PTX the JIT rejects, with the
// compiler's log in CU_JIT_ERROR_LOG_BUFFER; or an injected failure (load_cubin, load_ptx,
// load_fatbin). What the caller's entry point does with the outcome (a module now, or a library whose
// error waits for cuLibraryGetKernel) is the caller's business. Every image is recorded in
// FakeDriver::images (fake_cuda_last_image).
// Thread safety: may be called from any thread; loads run concurrently (FakeDriver's members are
// thread-safe and every compile has its own nvJitLink session).
#pragma once

#include <tests/fakes/fake_cuda/jit_options.hpp>
#include <tests/fakes/fake_cuda/module_registry.hpp>
#include <tests/fakes/fake_cuda/preserved_image.hpp>

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace jitcache::fakes::fake_cuda {

struct ImageSource {
  // Caller memory, or a buffer holding a file's bytes and a NUL after them.
  const void* image = nullptr;
  std::string_view entry_point;  // "cuModuleLoadDataEx": the image record names it
  // For cuModuleLoad / cuLibraryLoadFromFile: the file's bytes, which are what gets recorded.
  std::optional<std::span<const std::byte>> file;
};

struct ImageLoad {
  CUresult result = CUDA_SUCCESS;
  std::unique_ptr<FakeModule> module;  // set on success
  // The caller memory the image occupies, as far as it could be read (none for a file).
  std::vector<CallerRegion> regions;
};

// Loads `source` with the caller's parsed options, and writes the error and info logs and the wall
// time into the caller's slots before returning.
ImageLoad load_image(const ImageSource& source, const JitRequest& request);

}  // namespace jitcache::fakes::fake_cuda
