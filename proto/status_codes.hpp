// How a reply status (PROTOCOL.md §3) and an ErrorCode translate into each other, in one table that
// both sides read: the daemon answers a failed request with status_for(error.code), and a client
// turns a reply that is not ok into error_code_for(status). Keeping both directions in one table is
// what keeps them from disagreeing (they once did: a client read `forbidden` as "unsupported" while
// the daemon answered "unsupported" with `bad_request`).
//
// Most rows read both ways. The others read one way only, because the two vocabularies are not the
// same size: the wire has statuses a client folds into a coarser code (`busy` is "unavailable, try
// later"), and a daemon has failures the wire has no status for (a failed read is `internal`).
// Thread safety: constant data and pure functions.
#pragma once

#include <array>

#include <common/result.hpp>
#include <proto/wire.hpp>

namespace jitcache::proto {

enum class StatusMapping {
  both,       // status -> code (client) and code -> status (daemon)
  to_code,    // status -> code only: a client reads this status as this code
  to_status,  // code -> status only: a daemon answers this code with this status
};

struct StatusCodeRow {
  Status status;
  common::ErrorCode code;
  StatusMapping mapping;
};

// Every status but ok is read by exactly one row (both or to_code), and every ErrorCode by exactly
// one row (both or to_status); tests/unit/test_proto_status_codes.cpp checks that.
inline constexpr std::array<StatusCodeRow, 15> k_status_codes{{
    {Status::not_found, common::ErrorCode::not_found, StatusMapping::both},
    {Status::bad_request, common::ErrorCode::invalid_argument, StatusMapping::both},
    {Status::too_large, common::ErrorCode::too_large, StatusMapping::both},
    {Status::forbidden, common::ErrorCode::forbidden, StatusMapping::both},
    {Status::unavailable, common::ErrorCode::unavailable, StatusMapping::both},
    {Status::internal, common::ErrorCode::internal, StatusMapping::both},
    // Rationale: a full disk gets a status of its own, so that a client, `jitcache` and the
    // errors.no_space counter tell it apart from a daemon bug; nothing was written.
    {Status::no_space, common::ErrorCode::no_space, StatusMapping::both},
    // A limit was reached: to a client the same as a daemon that cannot serve now (try later).
    {Status::busy, common::ErrorCode::unavailable, StatusMapping::to_code},
    // COMPILE only (PROTOCOL.md §5 COMPILE): the PTX is bad; the daemon cannot compile this
    // faithfully (build it yourself); the worker failed.
    {Status::compile_error, common::ErrorCode::invalid_argument, StatusMapping::to_code},
    {Status::cannot_compile, common::ErrorCode::unsupported, StatusMapping::to_code},
    {Status::worker_failed, common::ErrorCode::internal, StatusMapping::to_code},
    // The daemon's own failures, which the wire names no finer: the store could not answer in
    // time; a system call failed or stored bytes are damaged.
    {Status::unavailable, common::ErrorCode::timeout, StatusMapping::to_status},
    {Status::internal, common::ErrorCode::io, StatusMapping::to_status},
    {Status::internal, common::ErrorCode::corrupt, StatusMapping::to_status},
    // Rationale: §3 gives bad_request to "unknown or unimplemented": what this daemon cannot do
    // (an unknown op, an entry in a codec it does not know) is refused, never reported as its bug.
    {Status::bad_request, common::ErrorCode::unsupported, StatusMapping::to_status},
}};

// The ErrorCode a client gives a reply of this status; internal for ok and for a status outside
// the table (a newer daemon's: PROTOCOL.md §3 says to treat it as a failure).
common::ErrorCode error_code_for(Status status);

// The status a daemon answers a request that failed with this code.
Status status_for(common::ErrorCode code);

}  // namespace jitcache::proto
