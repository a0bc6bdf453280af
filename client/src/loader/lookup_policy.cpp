#include <client/src/loader/lookup_policy.hpp>

#include <utility>

#include <proto/wire.hpp>

namespace jitcache::client::loader {

common::Result<std::optional<transport::FetchedImage>> look_up_entry(CachePort& port, const LookupAsk& ask,
                                                                     ClientCounters& counters) {
  auto timed = [&](auto call) {
    if (ask.timed_requests == nullptr) return call();
    auto timer = ask.timed_requests->step(&jitcache_load_info::ns_lookup);
    return call();
  };
  auto by_key = [&] {
    const proto::KeyFields& fields = ask.key();
    return timed([&] { return port.lookup(fields, ask.delivery); });
  };
  const std::optional<std::uint64_t> known = port.known_capabilities();
  if (known && (*known & proto::k_capability_fast_key) == 0) return by_key();

  auto fetched = timed([&] { return port.lookup_fast(ask.fast_key, ask.delivery); });
  const proto::KeyFields& fields = ask.key();
  if (fetched && fetched->has_value()) {
    if ((*fetched)->info.key.content == fields.content) return fetched;
    ++counters.fast_key_mismatches;
    return by_key();
  }
  if (known) return fetched;
  const bool refused =
      !fetched && fetched.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request);
  if (!fetched && !refused) return fetched;
  auto capabilities = timed([&] { return port.capabilities(); });
  if (!capabilities && capabilities.error().reply_status == 0) return capabilities.error();
  if (capabilities && (*capabilities & proto::k_capability_fast_key) != 0) return fetched;
  return by_key();
}

}  // namespace jitcache::client::loader
