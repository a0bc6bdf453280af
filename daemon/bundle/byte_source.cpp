#include <daemon/bundle/byte_source.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace jitcache::daemon::bundle {

using common::ErrorCode;
using common::make_error;

namespace {
common::Error ended_early(std::uint64_t offset, std::size_t wanted) {
  return common::Error{ErrorCode::corrupt, "the file ends at byte " + std::to_string(offset) + ", " +
                                               std::to_string(wanted) + " bytes short of a complete field: truncated"};
}
}  // namespace

common::Result<FdSource> FdSource::open(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error(ErrorCode::io, std::string("fstat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return make_error(ErrorCode::invalid_argument, "a bundle must be a regular file (not a pipe, socket or device)");
  }
  // The caller's descriptor, the caller's mistake: a file opened for writing only, or with O_PATH,
  // reads nothing, and a failing read would be answered as the daemon's own failure (`internal`).
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_PATH) != 0 || (flags & O_ACCMODE) == O_WRONLY) {
    return make_error(ErrorCode::invalid_argument, "a bundle must be a regular file open for reading");
  }
  return FdSource(fd, static_cast<std::uint64_t>(st.st_size));
}

common::Result<void> FdSource::read_exactly(std::span<std::uint8_t> out) {
  if (out.size() > remaining()) return ended_early(m_size, out.size() - remaining());
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t got = ::pread(m_fd, out.data() + done, out.size() - done, static_cast<off_t>(m_offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return make_error(ErrorCode::io, std::string("reading the bundle: ") + std::strerror(errno));
    if (got == 0) return ended_early(m_offset + done, out.size() - done);
    done += static_cast<std::size_t>(got);
  }
  m_offset += out.size();
  return {};
}

common::Result<void> CopyingSource::read_exactly(std::span<std::uint8_t> out) {
  JITCACHE_TRY(m_inner.read_exactly(out));
  return m_copy(std::span<const std::uint8_t>(out.data(), out.size()));
}

common::Result<void> MemorySource::read_exactly(std::span<std::uint8_t> out) {
  if (out.size() > remaining()) return ended_early(m_bytes.size(), out.size() - remaining());
  std::copy_n(m_bytes.data() + m_offset, out.size(), out.data());
  m_offset += out.size();
  return {};
}

}  // namespace jitcache::daemon::bundle
