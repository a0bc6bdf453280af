// Tenancy: what the store knows about its tenants beyond serving them (docs/security.md): the bytes
// each namespace holds (the metrics endpoint), and failure reports, which quarantine an entry or
// hide it from its reporter (REPORT_FAILURE). Quotas are the store's own business: a PUT over an
// untrusted namespace's quota evicts within that namespace first (namespace_quota.hpp).
//
// Thread safety: every method may be called from any thread; report_failure is a write on the
// store's single writer, namespace_totals a read on one of its read connections.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>
#include <proto/messages.hpp>

#include <daemon/store/store.hpp>

namespace jitcache::daemon::store {

// Entries and stored bytes of one namespace (k_shared_namespace, or a uid).
struct NamespaceUsage {
  std::uint32_t namespace_id = k_shared_namespace;
  std::uint64_t entries = 0;
  std::uint64_t bytes_stored = 0;
};

// The namespaces that hold entries, bounded for the metrics endpoint: the shared one (always, even
// empty) and the `top` largest others by stored bytes; the rest summed in `other`.
struct NamespaceTotals {
  std::vector<NamespaceUsage> largest;  // shared first, then by bytes_stored, largest first
  NamespaceUsage other;                 // namespace_id unused
  std::uint64_t other_namespaces = 0;   // how many namespaces `other` sums
};

// A client's word that an image it was served failed to load (REPORT_FAILURE).
struct FailureReport {
  std::uint32_t cu_result = 0;
  proto::FailureStage stage = proto::FailureStage::load;
  std::string detail;              // free text, at most proto::k_max_failure_detail_length bytes
  std::uint32_t reporter_uid = 0;  // from SO_PEERCRED
};

// What a failure report did (docs/security.md "Failure reports").
enum class ReportVerdict {
  quarantined,          // now quarantined, for every client
  already_quarantined,  // it was; the first reason is kept
  // A shared entry reported by an untrusted uid: no longer served to that uid, still served to
  // everyone else until report_quorum distinct uids have reported the same image.
  hidden_from_reporter,
};

struct ReportOutcome {
  std::uint32_t namespace_id = k_shared_namespace;  // of the entry the report applied to
  ReportVerdict verdict = ReportVerdict::quarantined;
  // Distinct untrusted uids that have reported this shared image so far (0 for other entries).
  std::uint32_t reporters = 0;
};

class Tenancy {
 public:
  virtual ~Tenancy() = default;

  // Reads one row per namespace (schema 5's namespace_totals), never the entries.
  virtual Result<NamespaceTotals> namespace_totals(unsigned top) = 0;
  // Applies a failure report to the entry a lookup by key id by `who` would serve (shared first,
  // then the caller's own). A trusted caller's report, or one on the caller's own entry,
  // quarantines it, so no lookup serves it again until a PUT replaces it. An untrusted caller's
  // report on a shared entry hides that entry from the caller's lookups at once and quarantines it
  // only once report_quorum distinct uids have reported it (SqliteStoreOptions). When no visible
  // entry of the key is live, the report applies to the first quarantined one (shared first) and
  // keeps its first reason. nullopt: no entry of the key is visible to `who`. A write: runs on the
  // single writer (a repeated report by the same uid writes nothing).
  virtual Result<std::optional<ReportOutcome>> report_failure(const proto::Digest256& key_id, const Visibility& who,
                                                              const FailureReport& report) = 0;
};

}  // namespace jitcache::daemon::store
