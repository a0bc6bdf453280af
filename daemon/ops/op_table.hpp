// The op table: one row per op of the wire protocol (PROTOCOL.md §5), and the only place that says
// where an op runs (its lane), which handler answers it, which capability bit announces it, what
// limits its lane puts on it, and who may call it. The connection (daemon/server/connection.cpp)
// reads a frame, finds its row and dispatches by it; HELLO's capability bits are the rows'
// (RequestHandler::capabilities). Adding an op is one row here and its handler.
// tests/unit/test_daemon_ops_op_table.cpp checks the table against proto's op enum and
// PROTOCOL.md's op list.
// Thread safety: the table is immutable.
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include <boost/asio/awaitable.hpp>

#include <daemon/ops/op_call.hpp>
#include <daemon/ops/reply.hpp>
#include <proto/wire.hpp>

namespace jitcache::daemon::ops {

class RequestHandler;

// Where an op's work runs.
enum class Lane {
  // The worker thread that read the request (each worker has a read connection of its own to the
  // store: SQLite's WAL lets reads run in parallel). An op whose handler is asynchronous starts
  // here and waits, suspended, for the service that finishes it (COMPILE: the compile service).
  worker,
  writer,       // the one writer thread: every store write
  maintenance,  // one thread: long, mostly reads with short writes of its own (VERIFY)
  diagnosis,    // one thread, never in front of a LOOKUP (EXPLAIN, MISSES: daemon/server/lanes.hpp)
  bundle,       // a thread per bundle operation admitted (k_max_bundle_operations)
};
std::string_view lane_name(Lane lane);

// Who may call an op; the handler may refuse more (REMOTE_CHECK's probe is for trusted callers).
enum class Caller {
  anyone,
  trusted,  // root, the daemon's own uid, trusted_users, trusted_groups (docs/security.md)
};

// What the daemon needs to serve an op at all; without it the op is "not implemented by this daemon"
// and its capability bit is clear.
enum class Needs {
  nothing,
  compile_service,  // the compile worker answered its start-up probe
  link_compiler,    // the compile worker reported its nvJitLink build (COMPILE of a link)
  bundle_service,   // bundles are configured (startup/bundle_setup.hpp)
  nvrtc_compiler,   // the NVRTC the administrator configured passed the worker's probe (NVRTC_COMPILE)
};

// How many requests of the op's lane may be queued or running at once, per uid and in all; one
// over is answered `busy` at once. 0: no limit. Rows of one lane share one count and state the
// same limits.
struct LaneLimits {
  unsigned per_uid = 0;
  unsigned total = 0;
};

// A capability bit that announces a feature of the op (not the op itself), and what it needs.
struct Feature {
  std::uint64_t bit = 0;
  Needs needs = Needs::nothing;
};

struct OpRow {
  proto::Op op;
  Lane lane;
  // Exactly one of the two: a handler that answers on its lane, or one that the connection awaits.
  Reply (RequestHandler::*handler)(OpCall&);
  boost::asio::awaitable<Reply> (RequestHandler::*async_handler)(OpCall&);
  std::uint64_t capability;  // the HELLO bit that announces the op; 0: every daemon serves it
  Needs needs;
  std::array<Feature, 2> features;  // bits announced with the op
  LaneLimits limits;
  Caller caller;
  // The request must carry a file descriptor (header flag request_fd).
  bool needs_descriptor;
  // A LOOKUP that a fleet tier must answer: tried on the worker with the local store alone, and
  // asked again on the remote lane when the remotes must be asked (daemon/remote/defer_remote.hpp).
  bool asks_remotes;
};

std::span<const OpRow> op_table();
// The row of `op`, or null: not an op of this daemon's table.
const OpRow* find_op(proto::Op op);
// `row.lane`, by op; an op without a row runs on the worker (it is only refused there).
Lane lane_for(proto::Op op);
// "EXPLAIN or MISSES": the ops of one lane, for messages.
std::string ops_of_lane(Lane lane);

}  // namespace jitcache::daemon::ops
