// EXPLAIN and MISSES (PROTOCOL.md §5 EXPLAIN, MISSES; `jitcache explain`, `jitcache misses`): why
// a key misses, as the daemon sees it now, from the entries of the key and of its content in every
// namespace (store/diagnosis.hpp), the eviction ring, the compile service's remembered failures and
// the miss ring (stats/recent_misses.hpp). Read-only: it runs on the connection's worker thread and
// its read connection, like LIST, and counts no hit, miss or use of any entry.
//
// What a caller may learn (docs/security.md "What is enforced"): everything about the shared
// namespace and its own; of another uid's namespace only that an entry of the key (or of its
// content) exists there, unless it is trusted; another uid's misses and a quarantine's reporter and
// detail only when trusted (or the reporter itself).
//
// Thread safety: free functions over thread-safe sources.
#pragma once

#include <cstdint>

#include <common/result.hpp>
#include <proto/explain_messages.hpp>

#include <daemon/compile/compile_service.hpp>
#include <daemon/stats/recent_misses.hpp>
#include <daemon/store/diagnosis.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::ops {

// Rationale: the entries read for one EXPLAIN: a content digest has one entry per arch, driver build
// and option set in use, rarely more than a few; 64 rows bound the work and the reply whatever the
// store holds (the reply lists at most proto::k_max_explain_findings).
inline constexpr unsigned k_explain_rows = 64;

// A reporter uid EXPLAIN does not show (the caller is neither trusted nor the reporter).
inline constexpr std::uint32_t k_uid_not_shown = 0xFFFFFFFFu;

struct ExplainSources {
  store::Diagnosis& diagnosis;
  const stats::RecentMisses& misses;
  compile::CompileService* compile = nullptr;  // null: the daemon does not compile
};

// `request.key` must be valid (proto::validate_key) when asked by key. `uid`: the caller's.
common::Result<proto::ExplainReply> explain(const ExplainSources& sources, const proto::ExplainRequest& request,
                                            const store::Visibility& who, std::uint32_t uid);

// The newest `limit` misses and evictions the caller may see.
proto::MissesReply recent_misses(const ExplainSources& sources, std::uint32_t limit, const store::Visibility& who,
                                 std::uint32_t uid);

}  // namespace jitcache::daemon::ops
