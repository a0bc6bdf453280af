#include <client/src/driver/cu_result_text.hpp>

#include <proto/cu_result_names.hpp>

namespace jitcache::client::driver {

std::string_view static_result_name(CUresult result) {
  const proto::CuResultName* row = proto::find_cu_result(static_cast<std::uint32_t>(result));
  return row != nullptr ? row->name : "CUDA_ERROR_UNKNOWN_CODE";
}

std::string describe_result(CUresult result) {
  return std::string(static_result_name(result)) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

}  // namespace jitcache::client::driver
