#include <tests/fakes/fake_cuda/preserved_image.hpp>

#include <tests/fakes/fake_cuda/caller_memory.hpp>

#include <cstdint>
#include <cstdio>

namespace jitcache::fakes::fake_cuda {
namespace {

std::optional<proto::Digest256> digest_of(const CallerRegion& region) {
  const auto bytes = caller_bytes(region.address, region.size);
  if (!bytes) return std::nullopt;
  return proto::sha256(proto::Bytes(reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()));
}

std::string describe(const CallerRegion& region) {
  char address[32];
  std::snprintf(address, sizeof(address), "%p", region.address);
  return "the " + std::to_string(region.size) + " bytes at " + address;
}

}  // namespace

PreservedImage::PreservedImage(const std::vector<CallerRegion>& regions) {
  for (const CallerRegion& region : regions) m_regions.push_back(Watched{region, digest_of(region)});
}

std::optional<std::string> PreservedImage::changed() const {
  for (const Watched& watched : m_regions) {
    // A region unreadable at load already failed the load; only a change since then is news.
    if (!watched.digest) continue;
    const auto now = digest_of(watched.region);
    if (!now) return describe(watched.region) + " are no longer readable";
    if (*now != *watched.digest) return describe(watched.region) + " changed";
  }
  return std::nullopt;
}

}  // namespace jitcache::fakes::fake_cuda
