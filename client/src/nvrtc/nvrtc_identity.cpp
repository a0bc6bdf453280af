#include <client/src/nvrtc/nvrtc_identity.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>

namespace jitcache::client::nvrtc {

namespace {

common::Error unsupported(std::string message) {
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}

common::Result<proto::NvrtcIdentity> identify(const void* real_function, int (*version)(int*, int*)) {
  Dl_info info{};
  if (::dladdr(real_function, &info) == 0 || info.dli_fname == nullptr || info.dli_fname[0] == '\0') {
    return unsupported("the library holding NVRTC's functions cannot be named (dladdr)");
  }
  proto::NvrtcIdentity identity;
  if (version == nullptr || version(&identity.major, &identity.minor) != 0 || identity.major <= 0) {
    return unsupported("nvrtcVersion gives no version");
  }
  const std::string library = info.dli_fname;
  auto library_digest = file_digest(library);
  JITCACHE_TRY(library_digest);
  identity.library = *library_digest;
  const std::size_t slash = library.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : library.substr(0, slash);
  const std::string builtins =
      directory + "/libnvrtc-builtins.so." + std::to_string(identity.major) + "." + std::to_string(identity.minor);
  auto builtins_digest = file_digest(builtins);
  JITCACHE_TRY(builtins_digest);
  identity.builtins = *builtins_digest;
  return identity;
}

}  // namespace

common::Result<proto::Checksum128> file_digest(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return unsupported(path + " cannot be opened");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return unsupported(path + " is not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return proto::xxh3_128({});
  }
  void* mapped = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) return unsupported(path + " cannot be mapped");
  const proto::Checksum128 digest =
      proto::xxh3_128(proto::Bytes(static_cast<const std::uint8_t*>(mapped), static_cast<std::size_t>(st.st_size)));
  ::munmap(mapped, static_cast<std::size_t>(st.st_size));
  return digest;
}

common::Result<proto::NvrtcIdentity> nvrtc_identity(const void* real_function, int (*version)(int*, int*)) {
  Dl_info info{};
  if (::dladdr(real_function, &info) == 0) return identify(real_function, version);
  static std::mutex mutex;
  static auto* known = new std::map<const void*, common::Result<proto::NvrtcIdentity>>();
  {
    std::lock_guard lock(mutex);
    if (auto it = known->find(info.dli_fbase); it != known->end()) return it->second;
  }
  auto identity = identify(real_function, version);
  std::lock_guard lock(mutex);
  known->emplace(info.dli_fbase, identity);
  return identity;
}

}  // namespace jitcache::client::nvrtc
