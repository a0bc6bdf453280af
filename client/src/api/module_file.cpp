#include <client/src/api/module_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jitcache::client::api {

using common::ErrorCode;
using common::make_error;

namespace {
// Rationale: cuModuleLoad of a multi-gigabyte file is not a real use; the bound keeps a wrong path
// (a disk image, /dev/zero) from exhausting memory.
constexpr off_t k_max_module_file = off_t{1} << 31;
}  // namespace

common::Result<std::vector<char>> read_module_file(const char* path) {
  if (path == nullptr) return make_error(ErrorCode::invalid_argument, "no module file path given");
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return make_error(ErrorCode::not_found,
                      std::string("cannot open module file ") + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorCode::io, std::string("module file ") + path + " is not a regular file");
  }
  if (st.st_size > k_max_module_file) {
    ::close(fd);
    return make_error(ErrorCode::too_large, std::string("module file ") + path + " is larger than 2 GiB");
  }
  std::vector<char> contents(static_cast<std::size_t>(st.st_size) + 1, '\0');
  std::size_t done = 0;
  while (done < static_cast<std::size_t>(st.st_size)) {
    ssize_t n = ::read(fd, contents.data() + done, static_cast<std::size_t>(st.st_size) - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int saved = errno;
      ::close(fd);
      return make_error(ErrorCode::io, std::string("cannot read module file ") + path + ": " +
                                           (n == 0 ? "it shrank while being read" : std::strerror(saved)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return contents;
}

}  // namespace jitcache::client::api
