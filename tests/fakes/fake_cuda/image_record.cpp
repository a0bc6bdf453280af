#include <tests/fakes/fake_cuda/image_record.hpp>

#include <proto/digest.hpp>

#include <algorithm>
#include <cstring>
#include <string>

namespace jitcache::fakes::fake_cuda {

void ImageRecord::record(std::string_view entry_point, fake_cuda_image_kind kind, bool fatbin_wrapper,
                         std::span<const std::byte> bytes) {
  fake_cuda_image_info info{};
  info.kind = kind;
  info.complete = 1;
  info.fatbin_wrapper = fatbin_wrapper ? 1 : 0;
  info.size = bytes.size();
  const proto::Bytes view(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  const proto::Digest256 digest = proto::sha256(view);
  std::memcpy(info.sha256, digest.bytes.data(), sizeof(info.sha256));
  const std::string hex = proto::to_hex(digest);
  std::memcpy(info.sha256_hex, hex.data(), std::min(hex.size(), sizeof(info.sha256_hex) - 1));
  store(info, entry_point);
}

void ImageRecord::record_incomplete(std::string_view entry_point, fake_cuda_image_kind kind, bool fatbin_wrapper) {
  fake_cuda_image_info info{};
  info.kind = kind;
  info.fatbin_wrapper = fatbin_wrapper ? 1 : 0;
  store(info, entry_point);
}

void ImageRecord::store(fake_cuda_image_info info, std::string_view entry_point) {
  const std::size_t n = std::min(entry_point.size(), sizeof(info.entry_point) - 1);
  std::memcpy(info.entry_point, entry_point.data(), n);
  const std::lock_guard lock(m_mutex);
  info.sequence = ++m_sequence;
  m_last = info;
}

bool ImageRecord::last(fake_cuda_image_info& out) const {
  const std::lock_guard lock(m_mutex);
  out = m_last;
  return m_sequence != 0;
}

void ImageRecord::reset() {
  const std::lock_guard lock(m_mutex);
  m_last = fake_cuda_image_info{};
  m_sequence = 0;
}

}  // namespace jitcache::fakes::fake_cuda
