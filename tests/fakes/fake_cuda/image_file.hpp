// The file behind cuModuleLoad, cuLibraryLoadFromFile and cuLinkAddFile, read whole into memory the
// fake owns, followed by one NUL so PTX text read from it is terminated (files of PTX are not).
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace jitcache::fakes::fake_cuda {

struct ImageFile {
  std::vector<std::byte> bytes_and_nul;  // the file's bytes, then one NUL

  std::span<const std::byte> bytes() const { return std::span(bytes_and_nul).first(bytes_and_nul.size() - 1); }
  const void* data() const { return bytes_and_nul.data(); }
};

// nullopt for a NULL path or a file that cannot be opened or read (the driver's
// CUDA_ERROR_FILE_NOT_FOUND), or one larger than the fake's 1 GiB cap.
std::optional<ImageFile> read_image_file(const char* path);

}  // namespace jitcache::fakes::fake_cuda
