#include <tests/fakes/fake_cuda/image_file.hpp>

#include <common/unique_fd.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace jitcache::fakes::fake_cuda {
namespace {

// Rationale: the cap the client's walker uses for PTX (1 GiB); no real image comes close.
constexpr std::size_t k_max_file_size = std::size_t{1} << 30;

}  // namespace

std::optional<ImageFile> read_image_file(const char* path) {
  if (path == nullptr) return std::nullopt;
  const common::UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd || ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  if (static_cast<std::size_t>(info.st_size) > k_max_file_size) return std::nullopt;
  ImageFile file;
  file.bytes_and_nul.resize(static_cast<std::size_t>(info.st_size) + 1);
  std::size_t done = 0;
  while (done + 1 < file.bytes_and_nul.size()) {
    const ssize_t n = ::read(fd.get(), file.bytes_and_nul.data() + done, file.bytes_and_nul.size() - 1 - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;  // the file shrank while we read it: what was there is the image
    done += static_cast<std::size_t>(n);
  }
  file.bytes_and_nul.resize(done + 1);
  file.bytes_and_nul.back() = std::byte{0};
  return file;
}

}  // namespace jitcache::fakes::fake_cuda
