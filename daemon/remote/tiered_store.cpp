#include <daemon/remote/tiered_store.hpp>

#include <spdlog/spdlog.h>

#include <proto/messages.hpp>

#include <daemon/remote/defer_remote.hpp>

namespace jitcache::daemon::remote {

using store::Selector;

std::string remote_producer(const IndexRecord& record) {
  std::string producer = record.producer + "; signer " + proto::signer_hex(record.signer);
  if (producer.size() > proto::k_max_producer_length) producer.resize(proto::k_max_producer_length);
  return producer;
}

common::Result<store::LookupOutcome> TieredStore::lookup(const Selector& selector, const store::Visibility& who) {
  auto local = m_local.lookup(selector, who);
  if (!local) return local;
  if (store::is_hit(*local)) {
    if (m_healer != nullptr && std::get<store::Hit>(*local).info.namespace_id == store::k_shared_namespace) {
      m_healer->offer_hit(selector);
    }
    return local;
  }
  if (std::get<store::Miss>(*local).reason != store::MissReason::not_found) return local;
  if (selector.kind() == Selector::Kind::key_id_prefix) return local;  // `jitcache get`: what is here
  if (DeferRemote::defer_here()) return local;  // a worker thread: the remote lane asks (defer_remote.hpp)
  if (selector.kind() == Selector::Kind::key_id && removed_by_operator(selector.id())) return local;
  const ExpectedKey expected{selector.kind() == Selector::Kind::key_id ? ExpectedKey::Kind::key_id
                                                                       : ExpectedKey::Kind::fast_key_id,
                             selector.id()};
  auto fetched = m_tier.fetch(expected);
  if (!fetched) {
    if (m_healer != nullptr) m_healer->offer_miss(selector);
    return local;
  }
  return serve_fetched(selector, who, std::move(*fetched));
}

bool TieredStore::removed_by_operator(const proto::Digest256& key_id) {
  if (m_removals == nullptr) return false;
  auto presence = m_removals->presence(store::k_shared_namespace, key_id);
  if (!presence || *presence != store::KeyPresence::removed) return false;
  spdlog::debug("key_id={}: not taken from the remotes: an operator removed it from the shared namespace",
                proto::to_hex(key_id));
  return true;
}

common::Result<store::LookupOutcome> TieredStore::serve_fetched(const Selector& selector, const store::Visibility& who,
                                                                Fetched fetched) {
  // Asked by fast key, the key id is known only now (asked by key, lookup() looked before asking).
  if (removed_by_operator(proto::key_id(fetched.record.key))) {
    return store::LookupOutcome(store::Miss{store::MissReason::not_found});
  }
  store::PutInput input;
  input.key = fetched.record.key;
  input.namespace_id = store::k_shared_namespace;
  input.producer = remote_producer(fetched.record);
  input.compile_time_us = fetched.record.compile_time_us;
  input.image = proto::Bytes(fetched.image);
  input.content_fast = fetched.record.content_fast;
  auto stored = m_local.put(input);
  if (m_sampler != nullptr) m_sampler->offer(fetched);
  if (stored) {
    auto served = m_local.lookup(selector, who);
    if (served && store::is_hit(*served)) return served;
  } else {
    spdlog::warn("storing key_id={} from remote {}: {}; serving it unstored", proto::to_hex(proto::key_id(input.key)),
                 m_tier.remote(fetched.remote).backend->name(), stored.error().message);
  }
  // Served as fetched (a full disk, or evicted at once): its checks passed, so it is as good as a
  // stored entry for this one load.
  store::Hit hit;
  hit.info.key_id = proto::key_id(input.key);
  hit.info.key = input.key;
  hit.info.namespace_id = store::k_shared_namespace;
  hit.info.producer = input.producer;
  hit.info.raw_size = fetched.image.size();
  hit.info.stored_size = fetched.image.size();
  hit.info.checksum = proto::xxh3_128(input.image);
  hit.info.created_at_ms = fetched.record.created_at_ms;
  hit.info.compile_time_us = fetched.record.compile_time_us;
  hit.content_fast = fetched.record.content_fast;
  hit.image = std::make_shared<const store::ImageBuffer>(fetched.image.begin(), fetched.image.end());
  return store::LookupOutcome(std::move(hit));
}

common::Result<store::PutOutcome> TieredStore::put(const store::PutInput& input) {
  auto stored = m_local.put(input);
  // Uploaded even when the local write failed (a full disk): the entry is as good for the fleet.
  if (input.namespace_id == store::k_shared_namespace && m_tier.uploads()) {
    Upload upload;
    upload.record.key = input.key;
    upload.record.content_fast = input.content_fast;
    upload.record.producer = input.producer;
    upload.record.compile_time_us = input.compile_time_us;
    upload.image.assign(input.image.begin(), input.image.end());
    upload.source.assign(input.source.begin(), input.source.end());
    m_tier.upload(std::move(upload));
  }
  return stored;
}

}  // namespace jitcache::daemon::remote
