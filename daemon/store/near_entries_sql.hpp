// The queries behind Diagnosis::near_entries (sqlite_diagnosis.cpp), named here so that a
// test can hold their query plans: each must be an index probe and a walk of at most its LIMIT rows
// (tests/unit/test_daemon_store_explain_plan.cpp).
//
// Parameters: ?1 key id, ?2 content digest (NULL for the key's own rows), ?3 the caller's uid (its
// failure reports), ?4 the row limit, ?5 a namespace.
//
// Thread safety: immutable after static initialisation.
#pragma once

#include <string>

namespace jitcache::daemon::store {

// The key's rows in every namespace (trusted callers), through entries_by_key.
extern const std::string k_near_key_sql;
// The key's row in one namespace: a probe of entries_by_key's unique (key_id, namespace).
extern const std::string k_near_key_in_namespace_sql;
// The content's rows of other keys in every namespace, in namespace order (trusted callers).
extern const std::string k_near_content_sql;
// The content's rows of other keys in one namespace (untrusted callers: shared, then their own).
extern const std::string k_near_content_in_namespace_sql;

}  // namespace jitcache::daemon::store
