#include <client/src/transport/mapped_image.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <string>

namespace jitcache::client::transport {

namespace {

constexpr int k_required_seals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;

common::Error refused(const std::string& why) {
  return common::make_error(common::ErrorCode::corrupt, "the image descriptor jitcached sent " + why);
}

}  // namespace

common::Result<MappedImage> MappedImage::map(int fd, std::uint64_t size) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return refused(std::string("cannot be examined: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return refused("is not a memory file");
  if (static_cast<std::uint64_t>(st.st_size) < size) {
    return refused("holds " + std::to_string(st.st_size) + " bytes, the reply says " + std::to_string(size));
  }
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & k_required_seals) != k_required_seals) {
    return refused("is not sealed against writing, shrinking and growing");
  }
  if (size == 0) return MappedImage();
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (data == MAP_FAILED) return refused(std::string("cannot be mapped: ") + std::strerror(errno));
  return MappedImage(data, size);
}

void MappedImage::narrow(proto::Bytes part) {
  const auto* base = static_cast<const std::uint8_t*>(m_data);
  assert(part.data() >= base + m_view_offset && part.data() + part.size() <= base + m_view_offset + m_view_size);
  m_view_offset = static_cast<std::size_t>(part.data() - base);
  m_view_size = part.size();
}

MappedImage& MappedImage::operator=(MappedImage&& other) noexcept {
  if (this != &other) {
    if (m_data != nullptr) ::munmap(m_data, m_size);
    m_data = std::exchange(other.m_data, nullptr);
    m_size = std::exchange(other.m_size, 0);
    m_view_offset = std::exchange(other.m_view_offset, 0);
    m_view_size = std::exchange(other.m_view_size, 0);
  }
  return *this;
}

MappedImage::~MappedImage() {
  if (m_data != nullptr) ::munmap(m_data, m_size);
}

}  // namespace jitcache::client::transport
