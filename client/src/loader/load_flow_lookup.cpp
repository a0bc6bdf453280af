// LoadFlow's LOOKUP: one round trip per load (load_flow.hpp has the whole flow).
//
// A daemon that has fast keys (HELLO capability bit 5) is asked by fast key, and its not_found is
// final: it keeps a fast key for every entry it stores and counts the miss itself. A daemon
// without them is asked by key. Where the bits are not known yet (a fresh connection, on which
// HELLO has not been sent), the flow asks by fast key at once, as every daemon since fast keys
// would have it, and looks at the bits only when the answer is not a hit: a miss then needs them
// anyway (capability bit 1 decides between COMPILE and a local JIT), and they say whether the
// not_found is final or, for an older daemon that refused selector 2, the key must be asked.
// Rationale: sending HELLO first would add a round trip to every hit on a fresh connection, which
// is every process's first load (docs/benchmarks.md).
#include <client/src/loader/load_flow.hpp>

namespace jitcache::client::loader {

common::Result<std::optional<transport::FetchedImage>> LoadFlow::look_up(LoadKey& key,
                                                                         transport::ImageDelivery delivery) {
  // Each request is timed as ns_lookup; the wait for the content digest is ns_key's (LoadKey).
  auto timed = [&](auto call) {
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    return call();
  };
  auto by_key = [&] {
    const proto::KeyFields& fields = key.complete();
    return timed([&] { return m_cache.lookup(fields, delivery); });
  };
  const std::optional<std::uint64_t> known = m_cache.known_capabilities();
  if (known && (*known & proto::k_capability_fast_key) == 0) return by_key();

  auto fetched = timed([&] { return m_cache.lookup_fast(key.built.fast_key(), delivery); });
  const proto::KeyFields& fields = key.complete();
  if (fetched && fetched->has_value()) {
    if ((*fetched)->info.key.content == fields.content) return fetched;
    // Another source with our fast key (an XXH3 collision, or a writer that lied): never loaded.
    // Our own entry, if any, has our content digest in its key.
    ++m_counters.fast_key_mismatches;
    return by_key();
  }
  if (known) return fetched;
  const bool refused =
      !fetched && fetched.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request);
  if (!fetched && !refused) return fetched;
  auto capabilities = timed([&] { return m_cache.capabilities(); });
  // A daemon that answers HELLO with an error status is alive and says nothing of fast keys.
  if (!capabilities && capabilities.error().reply_status == 0) return capabilities.error();
  if (capabilities && (*capabilities & proto::k_capability_fast_key) != 0) return fetched;
  return by_key();
}

}  // namespace jitcache::client::loader
