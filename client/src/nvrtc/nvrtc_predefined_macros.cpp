#include <client/src/nvrtc/nvrtc_predefined_macros.hpp>

#include <algorithm>
#include <array>

namespace jitcache::client::nvrtc {

namespace {

constexpr std::array<std::string_view, 12> k_families = {"__CUDA", "__cuda", "__NV",  "__nv",   "_NV_", "__EDG",
                                                         "__cpp_", "__STDC", "__SM_", "__has_", "NV_",  "CUDART"};

// Sorted, for binary_search.
constexpr std::string_view k_names[] = {
    "CUDA_IPC_HANDLE_SIZE",
    "CU_UUID_HAS_BEEN_DEFINED",
    "NULL",
    "_BOOL",
    "_CRTIMP",
    "_WCHAR_T",
    "__ARRAY_OPERATORS",
    "__ASSERT_STR_HELPER",
    "__BASE_FILE__",
    "__CHAR16_T_AND_CHAR32_T",
    "__COMMON_FUNCTIONS_H__",
    "__DATE__",
    "__DEVICE_ATOMIC_FUNCTIONS_H__",
    "__DEVICE_DOUBLE_FUNCTIONS_H__",
    "__DEVICE_FUNCTIONS_H__",
    "__DEVICE_LAUNCH_PARAMETERS_H__",
    "__DEVICE_TYPES_H__",
    "__DRIVER_TYPES_H__",
    "__EXCEPTIONS",
    "__FILE__",
    "__HOST_CONFIG_H__",
    "__HOST_DEFINES_H__",
    "__INCLUDE_LEVEL__",
    "__LIBRARY_TYPES_H__",
    "__LINE__",
    "__LP64__",
    "__MATH_FUNCTIONS_H__",
    "__PLACEMENT_DELETE",
    "__PRAGMA_REDEFINE_EXTNAME",
    "__RTTI",
    "__SIGNED_CHARS__",
    "__SURFACE_INDIRECT_FUNCTIONS_H__",
    "__SURFACE_TYPES_H__",
    "__TEXTURE_INDIRECT_FUNCTIONS_H__",
    "__TEXTURE_TYPES_H__",
    "__THROW",
    "__TIME__",
    "__VARIADIC_TEMPLATES",
    "__VECTOR_FUNCTIONS_H__",
    "__VECTOR_TYPES_H__",
    "__align__",
    "__annotate__",
    "__block_size__",
    "__builtin_align__",
    "__cdecl",
    "__cluster_dims__",
    "__constant__",
    "__cplusplus",
    "__device__",
    "__device_builtin__",
    "__device_builtin_surface_type__",
    "__device_builtin_texture_type__",
    "__export__",
    "__forceinline__",
    "__global__",
    "__grid_constant__",
    "__host__",
    "__import__",
    "__inline_hint__",
    "__is_identifier",
    "__launch_bounds__",
    "__local_maxnreg__",
    "__location__",
    "__managed__",
    "__maxnreg__",
    "__no_return__",
    "__noinline__",
    "__nv_pure__",
    "__nv_register_params__",
    "__shared__",
    "__specialization_static",
    "__thread__",
    "__tile__",
    "__tile_builtin__",
    "__tile_global__",
    "__volatile__",
};

constexpr std::string_view k_function_like[] = {
    "NV_DISPATCH_TARGET", "NV_IF_ELSE_TARGET", "NV_IF_TARGET", "assert", "va_arg", "va_copy", "va_end", "va_start"};

}  // namespace

bool nvrtc_may_predefine(std::string_view name) {
  for (const std::string_view family : k_families) {
    if (name.starts_with(family)) return true;
  }
  // The runtime's constants (cudaStreamDefault, cudaArrayLayered, ...), not the namespace `cuda`.
  if (name.size() > 4 && name.starts_with("cuda") && name[4] >= 'A' && name[4] <= 'Z') return true;
  if (nvrtc_predefines_function_like(name)) return true;
  return std::binary_search(std::begin(k_names), std::end(k_names), name);
}

bool nvrtc_predefines_function_like(std::string_view name) {
  return std::find(std::begin(k_function_like), std::end(k_function_like), name) != std::end(k_function_like);
}

}  // namespace jitcache::client::nvrtc
