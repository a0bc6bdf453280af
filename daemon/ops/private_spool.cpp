#include <daemon/ops/private_spool.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace jitcache::daemon::ops {

using common::ErrorCode;
using common::make_error;

namespace {

common::Error io_error(const std::string& what) {
  return make_error(errno == ENOSPC || errno == EDQUOT ? ErrorCode::no_space : ErrorCode::io,
                    what + ": " + std::strerror(errno));
}

}  // namespace

common::Result<PrivateSpool> PrivateSpool::create(const std::string& dir, std::uint64_t limit) {
  common::UniqueFd fd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!fd) {
    // Rationale: a file system without O_TMPFILE (some overlay and network ones): a named file,
    // unlinked before anything is written, is as private.
    std::string path = dir + "/.bundle-spool-XXXXXX";
    fd.reset(::mkostemp(path.data(), O_CLOEXEC));
    if (!fd) return io_error("creating a bundle spool file in " + dir);
    ::unlink(path.c_str());
  }
  return PrivateSpool(std::move(fd), limit);
}

common::Result<void> PrivateSpool::check_room(std::uint64_t bytes) const {
  if (bytes > m_limit - m_size) {
    return make_error(ErrorCode::too_large, "the bundle spool would pass the " + std::to_string(m_limit) +
                                                " bytes granted to it before it was written");
  }
  return {};
}

common::Result<void> PrivateSpool::append(proto::Bytes bytes) {
  JITCACHE_TRY(check_room(bytes.size()));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t put =
        ::pwrite(m_fd.get(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(m_size + done));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return io_error("writing the bundle spool");
    done += static_cast<std::size_t>(put);
  }
  m_size += bytes.size();
  return {};
}

common::Result<void> PrivateSpool::append_record(proto::Bytes record) {
  std::uint8_t length[8];
  std::uint64_t n = record.size();
  for (auto& b : length) {
    b = static_cast<std::uint8_t>(n & 0xff);
    n >>= 8;
  }
  // Whole or not at all: a record cut short would read back as the spool's damage.
  JITCACHE_TRY(check_room(sizeof length + record.size()));
  JITCACHE_TRY(append(proto::Bytes(length, sizeof length)));
  return append(record);
}

common::Result<std::size_t> PrivateSpool::read_at(std::uint64_t offset, std::span<std::uint8_t> out) const {
  std::size_t done = 0;
  while (done < out.size() && offset + done < m_size) {
    const ssize_t got = ::pread(m_fd.get(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return io_error("reading the bundle spool");
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

common::Result<std::optional<std::vector<std::uint8_t>>> PrivateSpool::next_record() {
  if (m_read == m_size) return std::optional<std::vector<std::uint8_t>>{};
  std::uint8_t length[8];
  auto got = read_at(m_read, std::span<std::uint8_t>(length, sizeof length));
  JITCACHE_TRY(got);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | length[i];
  if (*got != sizeof length || n > m_size - m_read - sizeof length) {
    return make_error(ErrorCode::internal, "the bundle spool ends inside a record");
  }
  std::vector<std::uint8_t> record(static_cast<std::size_t>(n));
  auto body = read_at(m_read + sizeof length, record);
  JITCACHE_TRY(body);
  if (*body != n) return make_error(ErrorCode::internal, "the bundle spool ends inside a record");
  m_read += sizeof length + n;
  return std::optional<std::vector<std::uint8_t>>(std::move(record));
}

}  // namespace jitcache::daemon::ops
