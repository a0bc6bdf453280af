#include <daemon/ops/op_table.hpp>

#include <daemon/ops/bundle_service.hpp>
#include <daemon/ops/request_handler.hpp>

namespace jitcache::daemon::ops {

namespace {

using proto::Op;
using H = RequestHandler;

constexpr std::array<Feature, 2> k_no_features{};
constexpr LaneLimits k_no_limits{};

// Rationale (the diagnosis lane's limits): an EXPLAIN or MISSES is a bounded number of index probes
// (daemon/store/near_entries_sql.hpp), but on one thread: at most 2 of one uid and 16 in all wait
// there, so a uid that floods it gets `busy`, and another uid's waits behind at most 2 of each
// other uid's.
constexpr LaneLimits k_diagnosis_limits{2, 16};
// Rationale (the bundle lane's): one bundle operation at a time per uid, each on a thread of its
// own, so one whose file stalls (a pipe, a FUSE file system) waits alone (bundle_service.hpp).
constexpr LaneLimits k_bundle_limits{1, static_cast<unsigned>(k_max_bundle_operations)};

// PROTOCOL.md §5 "Operations", in op-code order. Columns: op, lane, handler, awaited handler,
// capability bit, needs, features announced with it, lane limits, caller, needs a descriptor, asks
// the remotes.
const std::array<OpRow, 19> k_op_table{{
    {Op::hello, Lane::worker, &H::hello, nullptr, 0, Needs::nothing, k_no_features, k_no_limits, Caller::anyone, false,
     false},
    {Op::ping, Lane::worker, &H::ping, nullptr, 0, Needs::nothing, k_no_features, k_no_limits, Caller::anyone, false,
     false},
    // A read: on the worker that read it, no hand-off (docs/benchmarks.md "The hit path at the limit").
    {Op::lookup,
     Lane::worker,
     &H::lookup,
     nullptr,
     proto::k_capability_store,
     Needs::nothing,
     {{{proto::k_capability_fast_key, Needs::nothing}, {proto::k_capability_image_fd, Needs::nothing}}},
     k_no_limits,
     Caller::anyone,
     false,
     true},
    {Op::put, Lane::writer, &H::put, nullptr, proto::k_capability_store, Needs::nothing, k_no_features, k_no_limits,
     Caller::anyone, false, false},
    {Op::stats, Lane::worker, &H::stats, nullptr, proto::k_capability_store, Needs::nothing, k_no_features, k_no_limits,
     Caller::anyone, false, false},
    {Op::list, Lane::worker, &H::list, nullptr, proto::k_capability_store, Needs::nothing, k_no_features, k_no_limits,
     Caller::anyone, false, false},
    {Op::remove, Lane::writer, &H::remove, nullptr, proto::k_capability_store, Needs::nothing, k_no_features,
     k_no_limits, Caller::anyone, false, false},
    // Starts on the worker (decode, digest, the store lookup) and waits, suspended, for the compile
    // service; its limits are the service's own (compile_queue_per_uid, compile_bytes_per_uid).
    {Op::compile,
     Lane::worker,
     nullptr,
     &H::compile,
     proto::k_capability_compile,
     Needs::compile_service,
     {{{proto::k_capability_compile_link, Needs::link_compiler}, {}}},
     k_no_limits,
     Caller::anyone,
     false,
     false},
    {Op::report_failure, Lane::writer, &H::report_failure, nullptr, proto::k_capability_report_failure, Needs::nothing,
     k_no_features, k_no_limits, Caller::anyone, false, false},
    {Op::gc, Lane::writer, &H::gc, nullptr, proto::k_capability_gc, Needs::nothing, k_no_features, k_no_limits,
     Caller::trusted, false, false},
    // Long, mostly reads: there it holds up neither a worker's other connections nor the PUTs.
    {Op::verify, Lane::maintenance, &H::verify, nullptr, proto::k_capability_verify, Needs::nothing, k_no_features,
     k_no_limits, Caller::trusted, false, false},
    {Op::hit_note, Lane::worker, &H::hit_note, nullptr, proto::k_capability_hit_note, Needs::nothing, k_no_features,
     k_no_limits, Caller::anyone, false, false},
    // Anyone may ask what the daemon knows; a probe is for trusted callers (the handler says why).
    {Op::remote_check, Lane::worker, &H::remote_check, nullptr, proto::k_capability_remote_check, Needs::nothing,
     k_no_features, k_no_limits, Caller::anyone, false, false},
    {Op::explain, Lane::diagnosis, &H::explain, nullptr, proto::k_capability_explain, Needs::nothing, k_no_features,
     k_diagnosis_limits, Caller::anyone, false, false},
    {Op::misses, Lane::diagnosis, &H::misses, nullptr, proto::k_capability_explain, Needs::nothing, k_no_features,
     k_diagnosis_limits, Caller::anyone, false, false},
    {Op::export_bundle, Lane::bundle, &H::export_bundle, nullptr, proto::k_capability_bundles, Needs::bundle_service,
     k_no_features, k_bundle_limits, Caller::anyone, true, false},
    {Op::import_bundle, Lane::bundle, &H::import_bundle, nullptr, proto::k_capability_bundles, Needs::bundle_service,
     k_no_features, k_bundle_limits, Caller::anyone, true, false},
    // A figure: one counter moved, on the worker that read it.
    {Op::nvrtc_note, Lane::worker, &H::nvrtc_note, nullptr, proto::k_capability_nvrtc_note, Needs::nothing,
     k_no_features, k_no_limits, Caller::anyone, false, false},
    // As COMPILE: starts on the worker, waits for the compile service, whose per-uid limits are its own.
    {Op::nvrtc_compile, Lane::worker, nullptr, &H::nvrtc_compile, proto::k_capability_nvrtc_compile,
     Needs::nvrtc_compiler, k_no_features, k_no_limits, Caller::anyone, false, false},
}};

}  // namespace

std::span<const OpRow> op_table() { return k_op_table; }

const OpRow* find_op(Op op) {
  // Rows are in op-code order from 1 (checked by tests/unit/test_daemon_ops_op_table.cpp), so the
  // row of op N is row N-1: no search on the way of every request.
  const auto number = static_cast<std::size_t>(op);
  if (number == 0 || number > k_op_table.size()) return nullptr;
  const OpRow& row = k_op_table[number - 1];
  return row.op == op ? &row : nullptr;
}

Lane lane_for(Op op) {
  const OpRow* row = find_op(op);
  return row != nullptr ? row->lane : Lane::worker;
}

std::string_view lane_name(Lane lane) {
  switch (lane) {
    case Lane::worker: return "worker";
    case Lane::writer: return "writer";
    case Lane::maintenance: return "maintenance";
    case Lane::diagnosis: return "diagnosis";
    case Lane::bundle: return "bundle";
  }
  return "?";
}

std::string ops_of_lane(Lane lane) {
  std::string names;
  for (const OpRow& row : k_op_table) {
    if (row.lane != lane) continue;
    if (!names.empty()) names += " or ";
    names += proto::op_name(row.op);
  }
  return names;
}

}  // namespace jitcache::daemon::ops
