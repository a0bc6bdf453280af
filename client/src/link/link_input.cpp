#include <client/src/link/link_input.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <common/unique_fd.hpp>

namespace jitcache::client::link {

namespace {

// nvJitLinkInputType (nvJitLink.h 13.0); docs/driver-facts.md §2 lists the same numbers.
constexpr int k_nvjitlink_cubin = 1;
constexpr int k_nvjitlink_ptx = 2;
constexpr int k_nvjitlink_ltoir = 3;
constexpr int k_nvjitlink_fatbin = 4;
constexpr int k_nvjitlink_object = 5;
constexpr int k_nvjitlink_library = 6;

}  // namespace

LinkInput copy_input(proto::LinkInputKind kind, int given_type, const void* data, std::size_t size, const char* name) {
  LinkInput input;
  input.kind = kind;
  input.given_type = given_type;
  input.size = size;
  input.bytes.resize(size + 1);
  if (size > 0) std::memcpy(input.bytes.data(), data, size);
  input.bytes[size] = 0;
  if (name != nullptr) input.name = name;
  return input;
}

common::Result<std::vector<std::uint8_t>> read_input_file(const char* path, std::size_t max_bytes) {
  common::UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) {
    return common::make_error(common::ErrorCode::unavailable,
                              std::string("cannot open ") + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return common::make_error(common::ErrorCode::unavailable, std::string(path) + " is not a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return common::make_error(common::ErrorCode::too_large, std::string(path) + " has " + std::to_string(st.st_size) +
                                                                " bytes, more than " + std::to_string(max_bytes) +
                                                                " a session keeps");
  }
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return common::make_error(common::ErrorCode::unavailable, std::string("cannot read ") + path + ": " +
                                                                    (n == 0 ? "it shrank" : std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

std::optional<proto::LinkInputKind> kind_of_cu_input(CUjitInputType type) {
  switch (type) {
    case CU_JIT_INPUT_CUBIN: return proto::LinkInputKind::cubin;
    case CU_JIT_INPUT_PTX: return proto::LinkInputKind::ptx;
    case CU_JIT_INPUT_FATBINARY: return proto::LinkInputKind::fatbinary;
    case CU_JIT_INPUT_OBJECT: return proto::LinkInputKind::object;
    case CU_JIT_INPUT_LIBRARY: return proto::LinkInputKind::library;
    default: return std::nullopt;  // CU_JIT_INPUT_NVVM: deprecated LTO-IR, and numbers cuda.h may add
  }
}

std::optional<proto::LinkInputKind> kind_of_nvjitlink_input(int type) {
  switch (type) {
    case k_nvjitlink_cubin: return proto::LinkInputKind::cubin;
    case k_nvjitlink_ptx: return proto::LinkInputKind::ptx;
    case k_nvjitlink_ltoir: return proto::LinkInputKind::ltoir;
    case k_nvjitlink_fatbin: return proto::LinkInputKind::fatbinary;
    case k_nvjitlink_object: return proto::LinkInputKind::object;
    case k_nvjitlink_library: return proto::LinkInputKind::library;
    // Rationale: INDEX names other files the key cannot see, and ANY leaves the kind to nvJitLink's
    // guess; neither is keyed.
    default: return std::nullopt;
  }
}

int nvjitlink_input_of(proto::LinkInputKind kind) {
  switch (kind) {
    case proto::LinkInputKind::cubin: return k_nvjitlink_cubin;
    case proto::LinkInputKind::ptx: return k_nvjitlink_ptx;
    case proto::LinkInputKind::ltoir: return k_nvjitlink_ltoir;
    case proto::LinkInputKind::fatbinary: return k_nvjitlink_fatbin;
    case proto::LinkInputKind::object: return k_nvjitlink_object;
    case proto::LinkInputKind::library: return k_nvjitlink_library;
  }
  return 0;
}

}  // namespace jitcache::client::link
