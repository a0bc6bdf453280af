#include <tests/fakes/fake_cuda/link_api.hpp>

#include <tests/fakes/fake_cuda/cubin_elf.hpp>
#include <tests/fakes/fake_cuda/device_model.hpp>
#include <tests/fakes/fake_cuda/fake_driver.hpp>
#include <tests/fakes/fake_cuda/image_file.hpp>
#include <tests/fakes/fake_cuda/jit_options.hpp>

#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace jitcache::fakes::fake_cuda {

namespace {

CUresult add_input(LinkState& state, FakeDriver& driver, CUjitInputType type, void* data, std::size_t size,
                   const char* name) {
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(data), size);
  switch (type) {
    case CU_JIT_INPUT_PTX: {
      // The PTX must be NUL-terminated within `size` (callers pass strlen + 1); the text ends there.
      const auto* text = static_cast<const char*>(data);
      const void* nul = std::memchr(text, '\0', size);
      const std::string_view ptx(text, nul != nullptr ? static_cast<const char*>(nul) - text : size);
      return state.add_ptx(ptx, name, max_ptx_isa(driver.settings.get().driver_version), driver.counters);
    }
    case CU_JIT_INPUT_CUBIN: {
      if (const auto info = inspect_cubin(bytes); !info)
        return state.refuse(CUDA_ERROR_INVALID_IMAGE, info.error().message);
      return state.add_binary(NVJITLINK_INPUT_CUBIN, bytes, name);
    }
    case CU_JIT_INPUT_FATBINARY: return state.add_binary(NVJITLINK_INPUT_FATBIN, bytes, name);
    case CU_JIT_INPUT_OBJECT: return state.add_binary(NVJITLINK_INPUT_OBJECT, bytes, name);
    case CU_JIT_INPUT_LIBRARY: return state.add_binary(NVJITLINK_INPUT_LIBRARY, bytes, name);
    case CU_JIT_INPUT_NVVM:
      return state.refuse(CUDA_ERROR_NOT_SUPPORTED, "NVVM input is not supported (pre-12.0 LTO-IR)");
    default: return state.refuse(CUDA_ERROR_INVALID_VALUE, "unknown CUjitInputType " + std::to_string(type));
  }
}

}  // namespace

CUresult link_create(unsigned option_count, CUjit_option* options, void** option_values, CUlinkState* state_out) {
  FakeDriver& driver = FakeDriver::instance();
  if (state_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  JitRequest request;
  if (const CUresult parsed = parse_jit_options(option_count, options, option_values, request);
      parsed != CUDA_SUCCESS) {
    return parsed;
  }
  if (request.fallback_strategy_given) return CUDA_ERROR_INVALID_VALUE;
  if (auto code = driver.injected_failure(FaultPoint::link_create)) return *code;
  const Settings settings = driver.settings.get();
  const fb::Arch target = request.target.value_or(context_jit_target(settings.cc()));
  auto state = std::make_unique<LinkState>(request, target);
  if (const CUresult status = state->create_status(); status != CUDA_SUCCESS) return status;
  *state_out = driver.links.add(std::move(state));
  return CUDA_SUCCESS;
}

CUresult link_add_data(CUlinkState handle, CUjitInputType type, void* data, std::size_t size, const char* name,
                       unsigned option_count, CUjit_option* options, void** option_values) {
  FakeDriver& driver = FakeDriver::instance();
  LinkState* state = driver.links.find(handle);
  if (state == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (data == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  JitRequest ignored;
  if (const CUresult parsed = parse_jit_options(option_count, options, option_values, ignored);
      parsed != CUDA_SUCCESS) {
    return parsed;
  }
  if (auto code = driver.injected_failure(FaultPoint::link_add)) return state->fail(*code, "link_add");
  const CUresult result = add_input(*state, driver, type, data, size, name);
  if (result != CUDA_SUCCESS) driver.counters.set_last_error_log(state->error_log());
  return result;
}

CUresult link_add_file(CUlinkState handle, CUjitInputType type, const char* path, unsigned option_count,
                       CUjit_option* options, void** option_values) {
  FakeDriver& driver = FakeDriver::instance();
  driver.counters.link_add_file_calls.fetch_add(1);
  if (driver.links.find(handle) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto file = read_image_file(path);
  if (!file) {
    driver.counters.set_last_error_log(std::string("cuLinkAddFile: cannot read '") + path + "'");
    return CUDA_ERROR_FILE_NOT_FOUND;
  }
  // PTX is handed on with the NUL the fake appended; binary input with the file's own size.
  const std::size_t size = type == CU_JIT_INPUT_PTX ? file->bytes_and_nul.size() : file->bytes().size();
  return link_add_data(handle, type, file->bytes_and_nul.data(), size, path, option_count, options, option_values);
}

CUresult link_complete(CUlinkState handle, void** cubin_out, std::size_t* size_out) {
  FakeDriver& driver = FakeDriver::instance();
  LinkState* state = driver.links.find(handle);
  if (state == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (auto code = driver.injected_failure(FaultPoint::link_complete)) return state->fail(*code, "link_complete");
  const CUresult result = state->complete(cubin_out, size_out, driver.counters);
  if (result != CUDA_SUCCESS) driver.counters.set_last_error_log(state->error_log());
  return result;
}

CUresult link_destroy(CUlinkState handle) { return FakeDriver::instance().links.remove(handle); }

}  // namespace jitcache::fakes::fake_cuda
