#include <client/src/nvrtc/nvrtc_identity.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

#include <client/src/nvrtc/compile_lock.hpp>

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
  // The variant's builtins: libnvrtc.alt.so.13 opens libnvrtc-builtins.alt.so.13.0 (strace, as
  // docs/cache-key.md says), so the text between "libnvrtc" and ".so" names both.
  const std::string base = library.substr(slash == std::string::npos ? 0 : slash + 1);
  const std::size_t so = base.find(".so");
  const std::string variant =
      base.starts_with("libnvrtc") && so != std::string::npos && so >= 8 ? base.substr(8, so - 8) : std::string();
  const std::string builtins = directory + "/libnvrtc-builtins" + variant + ".so." + std::to_string(identity.major) +
                               "." + std::to_string(identity.minor);
  auto builtins_digest = file_digest(builtins);
  JITCACHE_TRY(builtins_digest);
  identity.builtins = *builtins_digest;
  return identity;
}

// What identifies the file's bytes without reading them (nvrtc_identity.hpp).
std::string stamp_of(const std::string& path, const struct stat& st) {
  std::ostringstream out;
  out << path << ' ' << st.st_dev << ' ' << st.st_ino << ' ' << st.st_size << ' ' << st.st_mtim.tv_sec << '.'
      << st.st_mtim.tv_nsec << ' ' << st.st_ctim.tv_sec << '.' << st.st_ctim.tv_nsec;
  return out.str();
}

std::string remembered_path(const std::string& stamp) {
  const std::string directory = private_directory();
  if (directory.empty()) return {};
  return directory + "/digest-" + proto::to_hex(proto::xxh3_128(proto::as_bytes(stamp)));
}

// The remembered digest: the file holds the stamp, a newline and 32 hex digits.
std::optional<proto::Checksum128> remembered(const std::string& file, const std::string& stamp) {
  if (file.empty()) return std::nullopt;
  std::ifstream in(file);
  std::string line;
  std::string hex;
  if (!std::getline(in, line) || line != stamp || !std::getline(in, hex) || hex.size() != 32) return std::nullopt;
  proto::Checksum128 digest;
  for (std::size_t i = 0; i < 16; ++i) {
    unsigned value = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &value) != 1) return std::nullopt;
    digest.bytes[i] = static_cast<std::uint8_t>(value);
  }
  if (proto::to_hex(digest) != hex) return std::nullopt;
  return digest;
}

// Not for a file changed within the last two seconds: a second change could share its timestamps
// (include_scan.cpp says more).
void remember(const std::string& file, const std::string& stamp, const proto::Checksum128& digest,
              const struct stat& st) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  if (file.empty() || now.tv_sec - st.st_ctim.tv_sec <= 2) return;
  const std::string partial = file + "." + std::to_string(::getpid());
  {
    std::ofstream out(partial, std::ios::trunc);
    out << stamp << '\n' << proto::to_hex(digest) << '\n';
    if (!out) return;
  }
  if (std::rename(partial.c_str(), file.c_str()) != 0) std::remove(partial.c_str());
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
  const std::string stamp = stamp_of(path, st);
  const std::string memory = remembered_path(stamp);
  if (auto known = remembered(memory, stamp)) {
    ::close(fd);
    return *known;
  }
  void* mapped = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) return unsupported(path + " cannot be mapped");
  const proto::Checksum128 digest =
      proto::xxh3_128(proto::Bytes(static_cast<const std::uint8_t*>(mapped), static_cast<std::size_t>(st.st_size)));
  ::munmap(mapped, static_cast<std::size_t>(st.st_size));
  remember(memory, stamp, digest, st);
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
