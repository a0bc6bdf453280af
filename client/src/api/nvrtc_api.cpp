// libjitcache's NVRTC functions (<jitcache/nvrtc.h>): the calls of client/src/nvrtc/nvrtc_calls.hpp
// on the NVRTC the process has loaded. Rationale: libjitcache-preload.so's wrappers find the real
// functions through the hooks; a program that links libjitcache names no hook, so the functions are
// looked up here, once, in the library itself (dlsym on its handle: under jitcache run the shim
// hands libjitcache the real functions, core_attach.cpp, so nothing is cached twice).
#include <jitcache/nvrtc.h>

#include <dlfcn.h>

#include <client/src/nvrtc/nvrtc_calls.hpp>

namespace {

namespace jnvrtc = jitcache::client::nvrtc;

jnvrtc::NvrtcEntryPoints find_entry_points() {
  jnvrtc::NvrtcEntryPoints real;
  void* library = nullptr;
  for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so.12"}) {
    library = ::dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) library = ::dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    if (library != nullptr) break;
  }
  if (library == nullptr) return real;  // kept open: the functions are used until the process ends
  const auto find = [&](const char* name) { return ::dlsym(library, name); };
  real.create = reinterpret_cast<decltype(real.create)>(find("nvrtcCreateProgram"));
  real.destroy = reinterpret_cast<decltype(real.destroy)>(find("nvrtcDestroyProgram"));
  real.add_name_expression = reinterpret_cast<decltype(real.add_name_expression)>(find("nvrtcAddNameExpression"));
  real.compile = reinterpret_cast<decltype(real.compile)>(find("nvrtcCompileProgram"));
  real.get_lowered_name = reinterpret_cast<decltype(real.get_lowered_name)>(find("nvrtcGetLoweredName"));
  real.version = reinterpret_cast<decltype(real.version)>(find("nvrtcVersion"));
  const char* const outputs[5][2] = {{"nvrtcGetProgramLogSize", "nvrtcGetProgramLog"},
                                     {"nvrtcGetPTXSize", "nvrtcGetPTX"},
                                     {"nvrtcGetCUBINSize", "nvrtcGetCUBIN"},
                                     {"nvrtcGetLTOIRSize", "nvrtcGetLTOIR"},
                                     {"nvrtcGetOptiXIRSize", "nvrtcGetOptiXIR"}};
  for (int i = 0; i < 5; ++i) {
    real.size_of[i] = reinterpret_cast<jnvrtc::SizeCall>(find(outputs[i][0]));
    real.bytes_of[i] = reinterpret_cast<jnvrtc::BytesCall>(find(outputs[i][1]));
  }
  return real;
}

const jnvrtc::NvrtcEntryPoints& entry_points() {
  static const jnvrtc::NvrtcEntryPoints real = find_entry_points();
  return real;
}

bool is_output(int output) { return output >= JITCACHE_NVRTC_LOG && output <= JITCACHE_NVRTC_OPTIXIR; }

}  // namespace

extern "C" {

int jitcache_nvrtc_create_program(void** program, const char* source, const char* name, int header_count,
                                  const char* const* headers, const char* const* include_names) {
  const auto& real = entry_points();
  if (real.create == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_create(real, reinterpret_cast<nvrtcProgram*>(program), source, name, header_count, headers,
                              include_names);
}

int jitcache_nvrtc_add_name_expression(void* program, const char* expression) {
  const auto& real = entry_points();
  if (real.add_name_expression == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_add_name_expression(real, static_cast<nvrtcProgram>(program), expression);
}

int jitcache_nvrtc_compile_program(void* program, int option_count, const char* const* options) {
  const auto& real = entry_points();
  if (real.compile == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_compile(real, static_cast<nvrtcProgram>(program), option_count, options);
}

int jitcache_nvrtc_get_output_size(void* program, int output, size_t* size) {
  if (!is_output(output)) return NVRTC_ERROR_INVALID_INPUT;
  const auto& real = entry_points();
  if (real.size_of[output] == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_output_size(real, static_cast<nvrtcProgram>(program),
                                   static_cast<jitcache::proto::NvrtcOutput>(output), size);
}

int jitcache_nvrtc_get_output(void* program, int output, char* out) {
  if (!is_output(output)) return NVRTC_ERROR_INVALID_INPUT;
  const auto& real = entry_points();
  if (real.bytes_of[output] == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_output_bytes(real, static_cast<nvrtcProgram>(program),
                                    static_cast<jitcache::proto::NvrtcOutput>(output), out);
}

int jitcache_nvrtc_get_lowered_name(void* program, const char* expression, const char** lowered) {
  const auto& real = entry_points();
  if (real.get_lowered_name == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_lowered_name(real, static_cast<nvrtcProgram>(program), expression, lowered);
}

int jitcache_nvrtc_destroy_program(void** program) {
  const auto& real = entry_points();
  if (real.destroy == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_destroy(real, reinterpret_cast<nvrtcProgram*>(program));
}

}  // extern "C"
