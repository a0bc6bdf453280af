// Cached cubins handed to cuLibraryLoadData with CU_LIBRARY_BINARY_IS_PRESERVED: the driver may
// read them until cuLibraryUnload (docs/driver-facts.md §6), so they are kept here, by library,
// until the preload library's cuLibraryUnload releases them.
// Thread safety: every function may be called from any thread (one mutex, held only to move a
// buffer in or out, never across a driver call).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <vector>

namespace jitcache::client::loader {

void keep_preserved_image(CUlibrary library, std::vector<std::uint8_t> image);
// Frees what was kept for `library` (nothing when nothing was).
void release_preserved_image(CUlibrary library);
// How many images are kept (for tests and the process report).
std::size_t preserved_image_count();

}  // namespace jitcache::client::loader
