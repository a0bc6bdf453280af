#include <proto/regular_file.hpp>

#include <fcntl.h>

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

}  // namespace jitcache::proto
