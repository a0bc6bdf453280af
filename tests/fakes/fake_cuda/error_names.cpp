#include <tests/fakes/fake_cuda/error_names.hpp>

#include <proto/cu_result_names.hpp>

namespace jitcache::fakes::fake_cuda {

// The table's strings are literals, so their data() is NUL-terminated and lives for the program.
CUresult error_name(CUresult code, const char** name) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const proto::CuResultName* row = proto::find_cu_result(static_cast<std::uint32_t>(code));
  *name = row != nullptr ? row->name.data() : nullptr;
  return row != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult error_string(CUresult code, const char** description) {
  if (description == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const proto::CuResultName* row = proto::find_cu_result(static_cast<std::uint32_t>(code));
  *description = row != nullptr ? row->description.data() : nullptr;
  return row != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // namespace jitcache::fakes::fake_cuda
