// Diagnosis: what the store can tell about a key beyond serving it, for EXPLAIN (`jitcache
// explain`, daemon/ops/explain_request.hpp) and MISSES: the entries of a key id or a content
// digest in every namespace, quarantined ones included, with their quarantine columns; and the
// entries eviction removed lately (recent_evictions.hpp). near_entries reads only what the caller
// may see (an untrusted uid: the shared namespace and its own); the evictions are filtered by the
// request handler.
//
// Thread safety: every method may be called from any thread; near_entries is a read on one of the
// store's read connections.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>
#include <proto/messages.hpp>

#include <daemon/store/eviction.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::store {

// One entry near a key, with what the store knows of its quarantine (schema/0002_quarantine.sql).
struct NearEntry {
  proto::EntryInfo info;
  std::uint32_t quarantine_result = 0;  // CUresult; 0 when live
  std::uint8_t quarantine_stage = 0;    // proto::FailureStage; 0 when live
  std::uint32_t quarantine_reporter_uid = 0;
  std::string quarantine_detail;
  // A report of this (shared) entry by the uid asked about exists: it is not served to that uid.
  // Then its time, CUresult and stage.
  bool reported_by_caller = false;
  std::int64_t reported_at_ms = 0;
  std::uint32_t reported_result = 0;
  std::uint8_t reported_stage = 0;
};

class Diagnosis {
 public:
  virtual ~Diagnosis() = default;

  // The entries whose key id is `key_id` and, when `content` is set, those of other keys whose
  // content digest is `content`, quarantined ones included: the key's own first, at most `limit` in
  // all. In every namespace when `who` is trusted; otherwise in the shared namespace and its own
  // only, the others not even read. `caller_uid`: whose failure reports
  // NearEntry::reported_by_caller names. A bounded number of index probes whatever the store holds.
  virtual Result<std::vector<NearEntry>> near_entries(const proto::Digest256& key_id,
                                                      const std::optional<proto::Digest256>& content,
                                                      const Visibility& who, std::uint32_t caller_uid,
                                                      unsigned limit) = 0;
  // What eviction removed lately, newest first (recent_evictions.hpp).
  virtual std::vector<EvictedEntry> recent_evictions(std::size_t limit, const Visibility& who) = 0;
  virtual std::vector<EvictedEntry> evictions_of(const proto::Digest256& key_id) = 0;
};

}  // namespace jitcache::daemon::store
