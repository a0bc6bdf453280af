#include <daemon/server/sealed_image.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace jitcache::daemon::server {

namespace {

common::Error system_error(const std::string& what) {
  return common::make_error(common::ErrorCode::io, what + ": " + std::strerror(errno));
}

}  // namespace

common::Result<std::shared_ptr<const SealedImage>> SealedImage::create(const store::ImageBuffer& image) {
  const int fd = ::memfd_create("jitcache-image", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return system_error("memfd_create");
  std::shared_ptr<const SealedImage> sealed(new SealedImage(fd, image.size()));
  std::size_t done = 0;
  while (done < image.size()) {
    const ssize_t n = ::pwrite(fd, image.data() + done, image.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return system_error("writing an image into its memfd");
    done += static_cast<std::size_t>(n);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return system_error("sealing an image's memfd");
  }
  return sealed;
}

SealedImage::~SealedImage() { ::close(m_fd); }

}  // namespace jitcache::daemon::server
