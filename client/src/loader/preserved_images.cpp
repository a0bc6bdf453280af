#include <client/src/loader/preserved_images.hpp>

#include <mutex>
#include <unordered_map>

namespace jitcache::client::loader {

namespace {

struct Kept {
  std::mutex mutex;
  std::unordered_map<CUlibrary, std::vector<std::uint8_t>> images;
};

// Never destroyed: a library may be unloaded during static destruction at exit.
Kept& kept() {
  static Kept* instance = new Kept;
  return *instance;
}

}  // namespace

void keep_preserved_image(CUlibrary library, std::vector<std::uint8_t> image) {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  k.images[library] = std::move(image);
}

void release_preserved_image(CUlibrary library) {
  std::vector<std::uint8_t> freed;
  Kept& k = kept();
  {
    std::lock_guard lock(k.mutex);
    auto found = k.images.find(library);
    if (found == k.images.end()) return;
    freed = std::move(found->second);
    k.images.erase(found);
  }
}

std::size_t preserved_image_count() {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  return k.images.size();
}

}  // namespace jitcache::client::loader
