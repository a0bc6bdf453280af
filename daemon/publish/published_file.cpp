#include <daemon/publish/published_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace jitcache::daemon::publish {

using common::ErrorCode;
using common::make_error;

namespace {

constexpr mode_t k_file_mode = 0640;

std::atomic<std::uint64_t> g_temp_counter{0};

common::Error errno_error(const std::string& what, int error) {
  return make_error(error == ENOSPC || error == EDQUOT ? ErrorCode::no_space : ErrorCode::io,
                    what + ": " + std::strerror(error));
}

common::Result<void> write_all(int fd, proto::Bytes head, proto::Bytes image) {
  std::size_t done = 0;
  const std::size_t total = head.size() + image.size();
  while (done < total) {
    iovec parts[2];
    int count = 0;
    if (done < head.size()) {
      parts[count++] = iovec{const_cast<std::uint8_t*>(head.data() + done), head.size() - done};
      parts[count++] = iovec{const_cast<std::uint8_t*>(image.data()), image.size()};
    } else {
      const std::size_t offset = done - head.size();
      parts[count++] = iovec{const_cast<std::uint8_t*>(image.data() + offset), image.size() - offset};
    }
    const ssize_t written = ::writev(fd, parts, count);
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno_error("writing a published image", errno);
    }
    done += static_cast<std::size_t>(written);
  }
  return {};
}

}  // namespace

common::Result<TemporaryFile> write_temporary(int dir_fd, const std::string& final_name, proto::Bytes head,
                                              proto::Bytes image) {
  TemporaryFile file;
  file.final_name = final_name;
  file.temp_name =
      ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_temp_counter.fetch_add(1)) + "." + final_name;
  file.bytes = head.size() + image.size();
  const int fd =
      ::openat(dir_fd, file.temp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, k_file_mode);
  if (fd < 0) return errno_error("creating a published image", errno);
  // Rationale: the file must carry the directory's group (the socket's) or the clients cannot read
  // it. A new file takes the daemon's primary group, which is that group under the shipped unit,
  // whose system-call filter refuses chown (EPERM): so chown only a file whose group differs (a
  // sidecar's socket_group, the pod's fsGroup, is a supplementary group of the daemon, which is a
  // member: it gave it the socket).
  struct stat dir_st {};
  struct stat file_st {};
  common::Result<void> written;
  if (::fstat(dir_fd, &dir_st) != 0 || ::fstat(fd, &file_st) != 0) {
    written = errno_error("inspecting a published image", errno);
  } else if (file_st.st_gid != dir_st.st_gid && ::fchown(fd, static_cast<uid_t>(-1), dir_st.st_gid) != 0) {
    written = errno_error("giving a published image the directory's group", errno);
  } else if (::fchmod(fd, k_file_mode) != 0) {  // the umask may have taken bits away; the mode is meant exactly
    written = errno_error("setting a published image's mode", errno);
  } else {
    written = write_all(fd, head, image);
  }
  if (::close(fd) != 0 && written) written = errno_error("closing a published image", errno);
  if (!written) {
    discard(dir_fd, file);
    return written.error();
  }
  return file;
}

common::Result<void> rename_into_place(int dir_fd, const TemporaryFile& file) {
  if (::renameat(dir_fd, file.temp_name.c_str(), dir_fd, file.final_name.c_str()) != 0) {
    const int error = errno;
    discard(dir_fd, file);
    return errno_error("renaming a published image into place", error);
  }
  return {};
}

void discard(int dir_fd, const TemporaryFile& file) { ::unlinkat(dir_fd, file.temp_name.c_str(), 0); }

common::Result<void> remove_published(int dir_fd, const std::string& name) {
  if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) return errno_error("removing " + name, errno);
  return {};
}

}  // namespace jitcache::daemon::publish
