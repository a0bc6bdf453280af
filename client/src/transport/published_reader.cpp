#include <client/src/transport/published_reader.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <common/unique_fd.hpp>
#include <proto/published_image.hpp>

namespace jitcache::client::transport {

using common::ErrorCode;
using common::make_error;

namespace {

// Rationale: the largest LOOKUP reply a client accepts without HELLO (unix_connection.hpp), plus
// the file's own head; a published image is at most publish_max_image, far below it.
constexpr std::uint64_t k_max_file_bytes = proto::k_default_max_frame_bytes + 4096;

// The daemon's uid, or root: the only owners a published directory or file may have.
bool trusted_owner(const struct stat& st, uid_t daemon_uid) { return st.st_uid == daemon_uid || st.st_uid == 0; }
bool writable_by_others(const struct stat& st) { return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0; }

}  // namespace

Result<std::optional<FetchedImage>> read_published(const std::string& socket_path, const DaemonTrust& trust,
                                                   const proto::FastKey& fast_key,
                                                   const proto::Digest256& fast_key_id) {
  auto socket_owner = check_socket_path(socket_path, trust);
  if (!socket_owner) return std::optional<FetchedImage>();
  const std::string dir_path = proto::published_dir_for(socket_path);
  common::UniqueFd dir(::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) {
    // Not readable by this uid (not in the socket's group): the socket is the way, not a rejection.
    if (errno == ENOENT || errno == EACCES) return std::optional<FetchedImage>();
    return make_error(ErrorCode::corrupt,
                      "the published directory " + dir_path + " cannot be opened: " + std::strerror(errno));
  }
  struct stat dir_st {};
  if (::fstat(dir.get(), &dir_st) != 0) return make_error(ErrorCode::io, "cannot stat " + dir_path);
  if (!trusted_owner(dir_st, *socket_owner) || writable_by_others(dir_st)) {
    return make_error(ErrorCode::corrupt, "the published directory " + dir_path +
                                              " is not owned by the daemon's uid or is writable by others");
  }

  const std::string name = proto::published_file_name(fast_key_id);
  common::UniqueFd file(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (file.get() < 0) {
    if (errno == ENOENT) return std::optional<FetchedImage>();
    return make_error(ErrorCode::corrupt, "the published image " + name + " cannot be opened: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) return make_error(ErrorCode::io, "cannot stat the published image " + name);
  if (!S_ISREG(st.st_mode))
    return make_error(ErrorCode::corrupt, "the published image " + name + " is not a regular file");
  if (!trusted_owner(st, *socket_owner) || writable_by_others(st)) {
    return make_error(ErrorCode::corrupt,
                      "the published image " + name + " is not owned by the daemon's uid or is writable by others");
  }
  if (static_cast<std::uint64_t>(st.st_size) > k_max_file_bytes) {
    return make_error(ErrorCode::corrupt, "the published image " + name + " is larger than any reply");
  }

  // Read into this process's own memory, never mapped: the bytes checked below are then the bytes
  // the driver gets, whatever happens to the file meanwhile (a file truncated under a mapping
  // raises SIGBUS; one written in place changes under it after the checks).
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  ByteBuffer read_bytes;
  read_bytes.resize(static_cast<std::size_t>(file_size));
  std::size_t done = 0;
  while (done < read_bytes.size()) {
    const ssize_t got = ::read(file.get(), read_bytes.data() + done, read_bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return make_error(ErrorCode::io, "reading the published image " + name + ": " + std::strerror(errno));
    }
    if (got == 0) return make_error(ErrorCode::corrupt, "the published image " + name + " shrank while it was read");
    done += static_cast<std::size_t>(got);
  }
  const proto::Bytes file_bytes = proto::Bytes(read_bytes);

  auto decoded = proto::decode_published_image(file_bytes);
  if (!decoded) return make_error(ErrorCode::corrupt, "the published image " + name + ": " + decoded.error().message);
  if (!(decoded->fast_key == fast_key)) {
    return make_error(ErrorCode::corrupt, "the published image " + name + " is for another fast key");
  }
  const proto::Bytes image = decoded->reply.image;
  if (image.size() != decoded->reply.info.raw_size || proto::xxh3_128(image) != decoded->reply.info.checksum) {
    return make_error(ErrorCode::corrupt, "the published image " + name + " does not match its size and checksum");
  }
  FetchedImage fetched;
  fetched.info = std::move(decoded->reply.info);
  fetched.checksum_verified = true;
  const auto offset = static_cast<std::size_t>(image.data() - read_bytes.data());
  const auto size = image.size();
  fetched.image = std::move(read_bytes);
  fetched.image.erase(fetched.image.begin(), fetched.image.begin() + static_cast<std::ptrdiff_t>(offset));
  fetched.image.resize(size);
  return std::optional<FetchedImage>(std::move(fetched));
}

}  // namespace jitcache::client::transport
