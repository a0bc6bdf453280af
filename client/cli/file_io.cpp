#include <client/cli/file_io.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jitcache::client::cli {

namespace {

proto::Error io_error(const std::string& what, const std::string& path, int error_number) {
  return proto::make_error(proto::ErrorCode::io, what + " " + path + ": " + std::strerror(error_number));
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

proto::Result<void> write_all(int fd, proto::Bytes bytes, const std::string& path) {
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

}  // namespace

proto::Result<std::vector<std::uint8_t>> read_whole_file(const std::string& path) {
  FdGuard fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return io_error("cannot read", path, errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return io_error("cannot read", path, errno);
  if (S_ISDIR(info.st_mode)) return proto::make_error(proto::ErrorCode::io, "cannot read " + path + ": it is a directory");

  std::vector<std::uint8_t> bytes;
  if (S_ISREG(info.st_mode)) bytes.reserve(static_cast<std::size_t>(info.st_size));
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

proto::Result<void> write_file_atomically(const std::string& path, proto::Bytes bytes) {
  std::string temp_path = path + ".jitcache-XXXXXX";
  FdGuard fd(::mkostemp(temp_path.data(), O_CLOEXEC));
  if (fd.get() < 0) return io_error("cannot create a temporary file next to", path, errno);

  auto written = [&]() -> proto::Result<void> {
    if (::fchmod(fd.get(), 0666 & ~current_umask()) != 0) return io_error("cannot set permissions of", temp_path, errno);
    if (auto r = write_all(fd.get(), bytes, temp_path); !r) return r;
    if (::fsync(fd.get()) != 0) return io_error("cannot flush", temp_path, errno);
    if (::close(fd.release()) != 0) return io_error("cannot write", temp_path, errno);
    if (::rename(temp_path.c_str(), path.c_str()) != 0) return io_error("cannot rename a temporary file to", path, errno);
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

}  // namespace jitcache::client::cli
