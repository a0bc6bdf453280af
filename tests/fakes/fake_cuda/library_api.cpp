#include <tests/fakes/fake_cuda/library_api.hpp>

#include <tests/fakes/fake_cuda/fake_driver.hpp>
#include <tests/fakes/fake_cuda/image_file.hpp>
#include <tests/fakes/fake_cuda/image_loader.hpp>
#include <tests/fakes/fake_cuda/library_options.hpp>

#include <string>

namespace jitcache::fakes::fake_cuda {
namespace {

// The options every cuLibraryLoad* checks before it looks at the image.
CUresult parse_options(CUjit_option* jit_options, void** jit_values, unsigned jit_count,
                       CUlibraryOption* library_options, void** library_values, unsigned library_count, JitRequest& jit,
                       LibraryRequest& library) {
  if (const CUresult parsed = parse_jit_options(jit_count, jit_options, jit_values, jit); parsed != CUDA_SUCCESS) {
    return parsed;
  }
  return parse_library_options(library_count, library_options, library_values, library);
}

CUlibrary make_library(FakeDriver& driver, ImageLoad loaded, bool preserved) {
  auto library = std::make_unique<FakeLibrary>();
  library->load_result = loaded.result;
  if (preserved) library->preserved.emplace(loaded.regions);
  if (loaded.result == CUDA_SUCCESS) {
    loaded.module->owner = ModuleOwner::library;
    for (const auto& function : loaded.module->functions) {
      library->kernels.push_back(std::make_unique<FakeKernel>(
          FakeKernel{function->name, reinterpret_cast<CUfunction>(function.get()), library.get()}));
    }
    library->module = driver.modules.add(std::move(loaded.module));
  }
  return driver.libraries.add(std::move(library));
}

}  // namespace

CUresult library_load_data(CUlibrary* library, const void* code, CUjit_option* jit_options, void** jit_values,
                           unsigned jit_count, CUlibraryOption* library_options, void** library_values,
                           unsigned library_count) {
  FakeDriver& driver = FakeDriver::instance();
  driver.counters.load_calls.library_load_data.fetch_add(1);
  if (library == nullptr || code == nullptr) return CUDA_ERROR_INVALID_VALUE;
  JitRequest jit;
  LibraryRequest request;
  if (const CUresult parsed = parse_options(jit_options, jit_values, jit_count, library_options, library_values,
                                            library_count, jit, request);
      parsed != CUDA_SUCCESS) {
    return parsed;
  }
  if (auto code_injected = driver.injected_failure(FaultPoint::load_library)) return *code_injected;
  ImageLoad loaded = load_image(ImageSource{code, "cuLibraryLoadData", std::nullopt}, jit);
  *library = make_library(driver, std::move(loaded), request.binary_is_preserved);
  return CUDA_SUCCESS;
}

CUresult library_load_from_file(CUlibrary* library, const char* path, CUjit_option* jit_options, void** jit_values,
                                unsigned jit_count, CUlibraryOption* library_options, void** library_values,
                                unsigned library_count) {
  FakeDriver& driver = FakeDriver::instance();
  driver.counters.load_calls.library_load_from_file.fetch_add(1);
  if (library == nullptr || path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  JitRequest jit;
  LibraryRequest request;
  if (const CUresult parsed = parse_options(jit_options, jit_values, jit_count, library_options, library_values,
                                            library_count, jit, request);
      parsed != CUDA_SUCCESS) {
    return parsed;
  }
  if (request.binary_is_preserved) return CUDA_ERROR_INVALID_VALUE;
  if (auto code_injected = driver.injected_failure(FaultPoint::load_library)) return *code_injected;
  const auto file = read_image_file(path);
  if (!file) {
    driver.counters.set_last_error_log(std::string("cuLibraryLoadFromFile: cannot read '") + path + "'");
    return CUDA_ERROR_FILE_NOT_FOUND;
  }
  ImageLoad loaded = load_image(ImageSource{file->data(), "cuLibraryLoadFromFile", file->bytes()}, jit);
  *library = make_library(driver, std::move(loaded), false);
  return CUDA_SUCCESS;
}

CUresult library_unload(CUlibrary library) {
  FakeDriver& driver = FakeDriver::instance();
  CUmodule module = nullptr;
  const CUresult result = driver.libraries.remove(library, module);
  if (module != nullptr) driver.modules.remove_library_module(module);
  return result;
}

}  // namespace jitcache::fakes::fake_cuda
