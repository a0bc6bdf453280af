#include <daemon/compile_worker/nvrtc_library.hpp>

#include <dlfcn.h>

#include <array>

#include <proto/nvrtc_library_identity.hpp>

namespace jitcache::daemon::compile_worker {

namespace {

common::Error unsupported(std::string message) {
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}

// The functions a program's NVRTC compile calls; a library without all of them is not an NVRTC
// whose answers the daemon could give for it.
constexpr std::array<const char*, 6> k_required{"nvrtcVersion",       "nvrtcCreateProgram", "nvrtcCompileProgram",
                                                "nvrtcGetProgramLog", "nvrtcGetPTX",        "nvrtcDestroyProgram"};

}  // namespace

common::Result<proto::NvrtcIdentity> configured_nvrtc_identity(const std::string& library_path) {
  if (library_path.empty() || library_path.front() != '/') {
    return unsupported("compile_nvrtc_library \"" + library_path + "\" is not an absolute path");
  }
  // Rationale: RTLD_LOCAL, so nothing the worker loads later binds to it by accident; the worker
  // exits after one job, so the handle is never closed.
  void* handle = ::dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return unsupported("compile_nvrtc_library " + library_path + " cannot be loaded: " + (why != nullptr ? why : "?"));
  }
  for (const char* name : k_required) {
    if (::dlsym(handle, name) == nullptr) {
      return unsupported("compile_nvrtc_library " + library_path + " is not an NVRTC library: it has no " + name);
    }
  }
  auto* version = reinterpret_cast<int (*)(int*, int*)>(::dlsym(handle, "nvrtcVersion"));
  auto identity =
      proto::nvrtc_library_identity(::dlsym(handle, "nvrtcCompileProgram"), version, proto::mapped_file_xxh3);
  if (!identity) {
    return unsupported("compile_nvrtc_library " + library_path + ": " + identity.error().message);
  }
  return identity;
}

std::string nvrtc_identity_line(const proto::NvrtcIdentity& identity) {
  return "NVRTC " + std::to_string(identity.major) + "." + std::to_string(identity.minor) + " " +
         proto::to_hex(identity.library) + " " + proto::to_hex(identity.builtins);
}

}  // namespace jitcache::daemon::compile_worker
