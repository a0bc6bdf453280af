#include <client/cli/file_io.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jitcache::client::cli {

namespace {

common::Error io_error(const std::string& what, const std::string& path, int error_number) {
  return common::make_error(common::ErrorCode::io, what + " " + path + ": " + std::strerror(error_number));
}

// Closes a descriptor when the scope ends unless it was released.
class FdGuard {
 public:
  explicit FdGuard(int fd) : m_fd(fd) {}
  ~FdGuard() {
    if (m_fd >= 0) ::close(m_fd);
  }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  int get() const { return m_fd; }
  int release() {
    int fd = m_fd;
    m_fd = -1;
    return fd;
  }

 private:
  int m_fd;
};

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

mode_t current_umask() {
  // umask() can only be read by setting it; the CLI is single-threaded, so restoring it at once
  // is safe.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

common::Result<void> write_all(int fd, proto::Bytes bytes, const std::string& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot write", path, errno);
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "a special file";
}

// Writes all of `bytes` into an open descriptor that is not a regular file (standard output, a
// device, a FIFO): no temporary file, no rename, no fsync (which such files do not support).
common::Result<void> write_directly(int fd, proto::Bytes bytes, const std::string& name) {
  if (::isatty(fd) == 1) {
    return common::make_error(common::ErrorCode::io, "not writing an image to " + name +
                                                         ": it is a terminal (redirect it, or give -o a file)");
  }
  return write_all(fd, bytes, name);
}

// An existing file that is not a regular file: opened without O_CREAT or O_TRUNC and written
// into. O_NONBLOCK makes a FIFO that no process reads an error (ENXIO) instead of a wait that may
// never end; it is cleared once open, so a slow reader only slows the write.
common::Result<void> write_into_special_file(const std::string& path, proto::Bytes bytes, bool& was_regular) {
  FdGuard fd(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENXIO) {
      return common::make_error(common::ErrorCode::io,
                                "cannot write " + path + ": no process has it open for reading (a FIFO or a socket)");
    }
    return io_error("cannot write", path, errno);
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return io_error("cannot write", path, errno);
  // Replaced by a regular file since it was looked at: that one gets the atomic write.
  if (S_ISREG(info.st_mode)) {
    was_regular = true;
    return {};
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) return io_error("cannot write", path, errno);
  if (auto written = write_directly(fd.get(), bytes, path); !written) return written;
  if (::close(fd.release()) != 0) return io_error("cannot write", path, errno);
  return {};
}

}  // namespace

common::Result<std::vector<std::uint8_t>> read_whole_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it makes no difference to a regular file.
  FdGuard fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) return io_error("cannot read", path, errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return io_error("cannot read", path, errno);
  if (!S_ISREG(info.st_mode)) {
    return common::make_error(common::ErrorCode::io,
                              "cannot read " + path + ": it is " + file_kind(info.st_mode) + ", not a regular file");
  }

  std::vector<std::uint8_t> bytes;
  bytes.reserve(static_cast<std::size_t>(info.st_size));
  std::uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot read", path, errno);
    }
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  return bytes;
}

common::Result<void> write_file_atomically(const std::string& path, proto::Bytes bytes) {
  std::string temp_path = path + ".jitcache-XXXXXX";
  FdGuard fd(::mkostemp(temp_path.data(), O_CLOEXEC));
  if (fd.get() < 0) return io_error("cannot create a temporary file next to", path, errno);

  auto written = [&]() -> common::Result<void> {
    if (::fchmod(fd.get(), 0666 & ~current_umask()) != 0)
      return io_error("cannot set permissions of", temp_path, errno);
    if (auto r = write_all(fd.get(), bytes, temp_path); !r) return r;
    if (::fsync(fd.get()) != 0) return io_error("cannot flush", temp_path, errno);
    if (::close(fd.release()) != 0) return io_error("cannot write", temp_path, errno);
    if (::rename(temp_path.c_str(), path.c_str()) != 0)
      return io_error("cannot rename a temporary file to", path, errno);
    return {};
  }();
  if (!written) {
    ::unlink(temp_path.c_str());
    return written;
  }

  // The rename is durable only once the directory entry is; a failure here leaves a complete
  // file in place, so it is not reported.
  FdGuard directory(::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory.get() >= 0) ::fsync(directory.get());
  return {};
}

common::Result<void> write_output(const std::string& path, proto::Bytes bytes) {
  if (path == k_standard_output) return write_directly(STDOUT_FILENO, bytes, "standard output");
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    if (S_ISDIR(info.st_mode)) {
      return common::make_error(common::ErrorCode::io, "cannot write " + path + ": it is a directory");
    }
    bool was_regular = false;
    auto written = write_into_special_file(path, bytes, was_regular);
    if (!written || !was_regular) return written;
  }
  return write_file_atomically(path, bytes);
}

}  // namespace jitcache::client::cli
