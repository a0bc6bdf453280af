#include <client/src/nvrtc/nvrtc_identity.hpp>

#include <dlfcn.h>
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
#include <proto/nvrtc_library_identity.hpp>
#include <proto/regular_file.hpp>

namespace jitcache::client::nvrtc {

namespace {

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
  auto file = proto::open_regular_file(path);
  JITCACHE_TRY(file);
  const std::string stamp = stamp_of(path, file->st);
  const std::string memory = remembered_path(stamp);
  if (auto known = file->st.st_size == 0 ? std::nullopt : remembered(memory, stamp)) return *known;
  auto digest = proto::mapped_descriptor_xxh3(file->fd.get(), static_cast<std::size_t>(file->st.st_size), path);
  JITCACHE_TRY(digest);
  remember(memory, stamp, *digest, file->st);
  return *digest;
}

common::Result<proto::NvrtcIdentity> nvrtc_identity(const void* real_function, int (*version)(int*, int*)) {
  const auto identify = [](const void* function, int (*asked)(int*, int*)) {
    return proto::nvrtc_library_identity(function, asked, file_digest);
  };
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
