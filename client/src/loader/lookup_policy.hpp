// Which LOOKUP a load or a link sends, and what its answer means: the one policy behind both a
// module load (LoadFlow::look_up, load_flow_lookup.cpp) and a link session (link::LinkCache), over
// the cache port (cache_port.hpp). One round trip where the daemon allows it:
//
// - A daemon that has fast keys (HELLO capability bit 5) is asked by fast key, and its not_found is
//   final: it keeps a fast key for every entry it stores and counts the miss itself. A daemon
//   without them is asked by key.
// - An entry found by fast key is used only if its content digest is the key's; otherwise (an XXH3
//   collision, or a writer that lied) it is never loaded, counted as fast_key_mismatches, and the
//   key is asked: our own entry, if any, has our content digest in its key.
// - Where the bits are not known yet (a fresh connection, on which HELLO has not been sent), the
//   fast key is asked at once, as every daemon since fast keys would have it, and the bits are
//   looked at only when the answer is not a hit: a miss then needs them anyway (capability bit 1
//   decides between COMPILE and a local JIT), and they say whether the not_found is final or, for
//   an older daemon that refused selector 2 (bad_request), the key must be asked. A HELLO answered
//   with an error status is a daemon alive that says nothing of fast keys: the key is asked.
//
// Rationale: sending HELLO first would add a round trip to every hit on a fresh connection, which
// is every process's first load (docs/benchmarks.md "The hit path at the limit").
//
// Errors: as the port's; a transport failure (reply_status 0) is returned as it is, and nothing
// more is asked. Thread safety: as the port's, one load's (or link's) thread.
#pragma once

#include <functional>
#include <optional>

#include <client/src/loader/cache_port.hpp>
#include <client/src/loader/client_counters.hpp>
#include <client/src/loader/load_record.hpp>
#include <common/result.hpp>
#include <proto/key.hpp>

namespace jitcache::client::loader {

struct LookupAsk {
  proto::FastKey fast_key;
  // The whole key, content digest included. Called once the fast-key answer is in (a load's
  // content digest is still being computed on other threads while that LOOKUP is in flight, and
  // this waits for it), and again when the key is asked; it must return the same key each time.
  std::function<const proto::KeyFields&()> key;
  transport::ImageDelivery delivery = transport::ImageDelivery::bytes;
  // When set, each request sent is timed into this record's ns_lookup, and the wait for the key
  // is not (a load times it as ns_key); a caller that times the whole look-up itself leaves it null.
  LoadRecord* timed_requests = nullptr;
};

// The entry to use, nullopt for a miss, or the port's error. The entry is not checked here
// (cached_image_check.hpp is the caller's): only its content digest is compared with the key's.
common::Result<std::optional<transport::FetchedImage>> look_up_entry(CachePort& port, const LookupAsk& ask,
                                                                     ClientCounters& counters);

}  // namespace jitcache::client::loader
