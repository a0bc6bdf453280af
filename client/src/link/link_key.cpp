#include <client/src/link/link_key.hpp>

#include <vector>

#include <proto/link_content.hpp>

namespace jitcache::client::link {

common::Result<LinkKey> build_link_key(std::span<const LinkInput> inputs, std::string arch, proto::DriverId linker,
                                       std::string options) {
  std::vector<proto::LinkInputView> views;
  views.reserve(inputs.size());
  for (const LinkInput& input : inputs) views.push_back(input.view());
  LinkKey key;
  key.fields.arch = std::move(arch);
  key.fields.driver_api = linker.api;
  key.fields.driver_build = std::move(linker.build);
  key.fields.options = std::move(options);
  key.fields.content = proto::link_content_digest(views);
  key.content_fast = proto::link_content_fast(views);
  JITCACHE_TRY(proto::validate_key(key.fields));
  return key;
}

}  // namespace jitcache::client::link
