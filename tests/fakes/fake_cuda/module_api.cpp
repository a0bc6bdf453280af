#include <tests/fakes/fake_cuda/module_api.hpp>

#include <tests/fakes/fake_cuda/fake_driver.hpp>
#include <tests/fakes/fake_cuda/image_file.hpp>
#include <tests/fakes/fake_cuda/image_loader.hpp>

namespace jitcache::fakes::fake_cuda {
namespace {

CUresult register_module(FakeDriver& driver, ImageLoad loaded, CUmodule* module) {
  if (loaded.result != CUDA_SUCCESS) return loaded.result;
  *module = driver.modules.add(std::move(loaded.module));
  return CUDA_SUCCESS;
}

}  // namespace

CUresult load_module_from_memory(ModuleLoadEntry entry, CUmodule* module, const void* image, unsigned option_count,
                                 CUjit_option* options, void** option_values) {
  FakeDriver& driver = FakeDriver::instance();
  driver.counters.module_load_calls.fetch_add(1);
  const char* name = "cuModuleLoadData";
  switch (entry) {
    case ModuleLoadEntry::load_data: driver.counters.load_calls.module_load_data.fetch_add(1); break;
    case ModuleLoadEntry::load_data_ex:
      driver.counters.load_calls.module_load_data_ex.fetch_add(1);
      name = "cuModuleLoadDataEx";
      break;
    case ModuleLoadEntry::load_fatbinary:
      driver.counters.load_calls.module_load_fatbinary.fetch_add(1);
      name = "cuModuleLoadFatBinary";
      break;
  }
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  JitRequest request;
  if (const CUresult parsed = parse_jit_options(option_count, options, option_values, request);
      parsed != CUDA_SUCCESS) {
    return parsed;
  }
  return register_module(driver, load_image(ImageSource{image, name, std::nullopt}, request), module);
}

CUresult load_module_from_file(CUmodule* module, const char* path) {
  FakeDriver& driver = FakeDriver::instance();
  driver.counters.module_load_calls.fetch_add(1);
  driver.counters.load_calls.module_load.fetch_add(1);
  if (module == nullptr || path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto file = read_image_file(path);
  if (!file) {
    driver.counters.set_last_error_log(std::string("cuModuleLoad: cannot read '") + path + "'");
    return CUDA_ERROR_FILE_NOT_FOUND;
  }
  return register_module(driver, load_image(ImageSource{file->data(), "cuModuleLoad", file->bytes()}, JitRequest{}),
                         module);
}

CUresult module_loading_mode(CUmoduleLoadingMode* mode) {
  if (mode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *mode = FakeDriver::instance().settings.get().eager_module_loading ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
  return CUDA_SUCCESS;
}

}  // namespace jitcache::fakes::fake_cuda
