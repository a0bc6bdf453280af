#include <client/src/link/nvjitlink_identity.hpp>

#include <dlfcn.h>
#include <sys/stat.h>

#include <map>
#include <mutex>
#include <string>

#include <proto/linker_identity.hpp>

namespace jitcache::client::link {

namespace {

common::Error unsupported(std::string message) {
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}

common::Result<proto::DriverId> identify(const void* real_function, void* (*lookup)(void*, const char*)) {
  Dl_info info{};
  if (::dladdr(real_function, &info) == 0 || info.dli_fname == nullptr) {
    return unsupported("the library holding nvJitLink's functions cannot be named (dladdr)");
  }
  const std::string path = info.dli_fname;
  // RTLD_NOLOAD: the library is loaded already (its function is at hand); this only gets a handle.
  void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return unsupported(path + " cannot be reopened to ask its version");
  auto version = reinterpret_cast<NvJitLinkVersionFunction>(lookup(handle, "nvJitLinkVersion"));
  unsigned major = 0;
  unsigned minor = 0;
  const bool known = version != nullptr && version(&major, &minor) == NVJITLINK_SUCCESS && major > 0;
  ::dlclose(handle);
  if (!known) return unsupported(path + " has no working nvJitLinkVersion (nvJitLink before 12.3)");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return unsupported(path + " cannot be stat()ed");
  return proto::nvjitlink_driver_id(major, minor, static_cast<std::uint64_t>(st.st_size));
}

}  // namespace

common::Result<proto::DriverId> nvjitlink_identity(const void* real_function,
                                                   void* (*lookup)(void* handle, const char* name)) {
  // Keyed by the library's base address: one answer per loaded library, found once.
  Dl_info info{};
  if (::dladdr(real_function, &info) == 0) return identify(real_function, lookup);
  static std::mutex mutex;
  static auto* known = new std::map<const void*, common::Result<proto::DriverId>>();
  {
    std::lock_guard lock(mutex);
    if (auto it = known->find(info.dli_fbase); it != known->end()) return it->second;
  }
  auto identity = identify(real_function, lookup);
  std::lock_guard lock(mutex);
  known->emplace(info.dli_fbase, identity);
  return identity;
}

}  // namespace jitcache::client::link
