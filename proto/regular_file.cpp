#include <proto/regular_file.hpp>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

namespace jitcache::proto {

common::Result<RegularFile> open_regular_file(const std::string& path) {
  RegularFile file;
  // O_NONBLOCK: opening a FIFO planted where a file is expected must not wait for a writer.
  file.fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!file.fd) return common::make_error(common::ErrorCode::unsupported, path + " cannot be opened");
  if (::fstat(file.fd.get(), &file.st) != 0 || !S_ISREG(file.st.st_mode)) {
    return common::make_error(common::ErrorCode::unsupported, path + " is not a regular file");
  }
  return file;
}

common::Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes) {
  auto file = open_regular_file(path);
  JITCACHE_TRY(file);
  if (static_cast<std::uint64_t>(file->st.st_size) > max_bytes) {
    return common::make_error(common::ErrorCode::unsupported, path + " is larger than " + std::to_string(max_bytes));
  }
  std::string content;
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(file->fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return common::make_error(common::ErrorCode::unsupported, path + " cannot be read");
    if (got == 0) return content;
    if (content.size() + static_cast<std::size_t>(got) > max_bytes) {
      return common::make_error(common::ErrorCode::unsupported, path + " grew beyond " + std::to_string(max_bytes));
    }
    content.append(buffer, static_cast<std::size_t>(got));
  }
}

}  // namespace jitcache::proto
