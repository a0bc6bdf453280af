#include <proto/nvrtc_library_identity.hpp>

#include <proto/regular_file.hpp>

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace jitcache::proto {

namespace {

common::Error unsupported(std::string message) {
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}

}  // namespace

common::Result<NvrtcIdentity> nvrtc_library_identity(const void* nvrtc_function, int (*version)(int*, int*),
                                                     const NvrtcFileDigest& digest) {
  Dl_info info{};
  if (::dladdr(nvrtc_function, &info) == 0 || info.dli_fname == nullptr || info.dli_fname[0] == '\0') {
    return unsupported("the library holding NVRTC's functions cannot be named (dladdr)");
  }
  NvrtcIdentity identity;
  if (version == nullptr || version(&identity.major, &identity.minor) != 0 || identity.major <= 0) {
    return unsupported("nvrtcVersion gives no version");
  }
  const std::string library = info.dli_fname;
  auto library_digest = digest(library);
  JITCACHE_TRY(library_digest);
  identity.library = *library_digest;
  const std::size_t slash = library.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : library.substr(0, slash);
  // The variant's builtins: libnvrtc.alt.so.13 opens libnvrtc-builtins.alt.so.13.0 (strace, as
  // docs/cache-key.md says), so the text between "libnvrtc" and ".so" names both.
  const std::string base = library.substr(slash == std::string::npos ? 0 : slash + 1);
  const std::size_t so = base.find(".so");
  const std::string variant =
      base.starts_with("libnvrtc") && so != std::string::npos && so >= 8 ? base.substr(8, so - 8) : std::string();
  const std::string builtins = directory + "/libnvrtc-builtins" + variant + ".so." + std::to_string(identity.major) +
                               "." + std::to_string(identity.minor);
  auto builtins_digest = digest(builtins);
  JITCACHE_TRY(builtins_digest);
  identity.builtins = *builtins_digest;
  return identity;
}

common::Result<Checksum128> mapped_file_xxh3(const std::string& path) {
  auto file = open_regular_file(path);
  JITCACHE_TRY(file);
  return mapped_descriptor_xxh3(file->fd.get(), static_cast<std::size_t>(file->st.st_size), path);
}

common::Result<Checksum128> mapped_descriptor_xxh3(int fd, std::size_t size, const std::string& path) {
  if (size == 0) return xxh3_128({});
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (mapped == MAP_FAILED) return unsupported(path + " cannot be mapped");
  const Checksum128 digest = xxh3_128(Bytes(static_cast<const std::uint8_t*>(mapped), size));
  ::munmap(mapped, size);
  return digest;
}

}  // namespace jitcache::proto
