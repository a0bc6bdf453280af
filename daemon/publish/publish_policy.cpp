#include <daemon/publish/publish_policy.hpp>

#include <daemon/store/store.hpp>

namespace jitcache::daemon::publish {

PublishVerdict publish_verdict(const proto::EntryInfo& info, bool has_fast_key, std::uint64_t max_image_bytes) {
  if (info.namespace_id != store::k_shared_namespace) return PublishVerdict::not_shared;
  if (info.quarantined_at_ms != 0) return PublishVerdict::quarantined;
  if (!has_fast_key) return PublishVerdict::no_fast_key;
  if (info.raw_size > max_image_bytes) return PublishVerdict::too_large;
  return PublishVerdict::publish;
}

std::string_view verdict_name(PublishVerdict verdict) {
  switch (verdict) {
    case PublishVerdict::publish: return "publish";
    case PublishVerdict::not_shared: return "not_shared";
    case PublishVerdict::quarantined: return "quarantined";
    case PublishVerdict::no_fast_key: return "no_fast_key";
    case PublishVerdict::too_large: return "too_large";
  }
  return "unknown";
}

}  // namespace jitcache::daemon::publish
