// LoadFlow's LOOKUP: the policy every LOOKUP of the client follows (lookup_policy.hpp), with each
// request timed as ns_lookup and the wait for the content digest as ns_key (LoadKey::complete):
// the fast-key LOOKUP is in flight while the digest is computed on other threads.
#include <client/src/loader/load_flow.hpp>
#include <client/src/loader/lookup_policy.hpp>

namespace jitcache::client::loader {

common::Result<std::optional<transport::FetchedImage>> LoadFlow::look_up(LoadKey& key,
                                                                         transport::ImageDelivery delivery) {
  const LookupAsk ask{key.built.fast_key(), [&key]() -> const proto::KeyFields& { return key.complete(); }, delivery,
                      &m_record};
  return look_up_entry(m_cache, ask, m_counters);
}

}  // namespace jitcache::client::loader
