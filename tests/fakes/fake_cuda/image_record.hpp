// The last image a load entry point was handed (fake_cuda_last_image): its kind, the entry point, and
// the size and SHA-256 of exactly the bytes the fake read, so a test can prove that an image reached
// the "driver" byte for byte (a cubin the preload library passed through, a cubin it served).
//
// Rationale: SHA-256 rather than XXH3-128 because it is the digest jitcache itself names images by
// (proto/digest.hpp), so a test can compare against the store's content digest or compute it with
// any tool (sha256sum).
// Thread safety: every member function may be called from any thread (one mutex); a reader gets one
// whole record, never half of two.
#pragma once

#include <tests/fakes/fake_cuda/fake_cuda_control.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string_view>

namespace jitcache::fakes::fake_cuda {

class ImageRecord {
 public:
  // The image was read whole: `bytes` are exactly its bytes.
  void record(std::string_view entry_point, fake_cuda_image_kind kind, bool fatbin_wrapper,
              std::span<const std::byte> bytes);
  // The image could not be read whole (cut short, unreadable, no file).
  void record_incomplete(std::string_view entry_point, fake_cuda_image_kind kind, bool fatbin_wrapper);
  // false (and a zeroed `out`) when nothing was recorded since the last reset.
  bool last(fake_cuda_image_info& out) const;
  void reset();

 private:
  void store(fake_cuda_image_info info, std::string_view entry_point);

  mutable std::mutex m_mutex;
  fake_cuda_image_info m_last{};
  std::uint64_t m_sequence = 0;
};

}  // namespace jitcache::fakes::fake_cuda
