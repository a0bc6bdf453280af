// One client connection: read a frame, dispatch it by its op table row (daemon/ops/op_table.hpp),
// write the reply, repeat. It knows no op by name.
//
// Deadlines (PROTOCOL.md §1): idle_timeout while waiting for the first byte of a request,
// read_deadline from that byte until the frame is complete, write_deadline for the reply. A watchdog
// coroutine on the same executor closes the socket when the current deadline passes, which ends the
// pending read or write. Thread safety: everything runs on the io_context of the worker that
// accepted the connection, which one thread runs (server.hpp), so a connection's handlers never run
// at once and no strand is needed; close_if_idle() and force_close() may be called from any thread
// (they post to it).
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include <common/unique_fd.hpp>
#include <daemon/ops/op_call.hpp>
#include <daemon/ops/op_table.hpp>
#include <daemon/ops/reply.hpp>
#include <daemon/policy/peer_credentials.hpp>
#include <daemon/policy/request_bytes_budget.hpp>
#include <daemon/server/sealed_image.hpp>
#include <daemon/server/server_context.hpp>
#include <proto/wire.hpp>

namespace jitcache::daemon::server {

using ops::Reply;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Socket = boost::asio::local::stream_protocol::socket;
  // Rationale: the worker's io_context itself, not a strand over it: one thread runs it, so a strand
  // serialised nothing, and it cost a lock, a queue and, too large for any_io_executor's inline
  // storage, a heap allocation each time the executor was copied: 6 per 4 KB LOOKUP hit
  // (docs/benchmarks.md "One turn per request").
  using Executor = boost::asio::io_context::executor_type;

  Connection(Socket socket, Executor executor, ServerContext& context, policy::PeerCredentials peer);

  // Serves requests until the peer leaves, a deadline passes, or the server drains.
  boost::asio::awaitable<void> run();
  // Draining: closes now if the connection is waiting for a request after serving one and no byte
  // of a next request has arrived; one that has served none gets a short grace for its first (it
  // was made just before the drain); otherwise the connection answers the request in flight and
  // those already sent behind it (pipelined), then closes (PROTOCOL.md §1 "Restarts").
  void close_if_idle();
  void force_close();

 private:
  enum class Phase { idle, reading, processing, writing };
  using Clock = std::chrono::steady_clock;

  // `self` keeps the connection alive from the moment the coroutine is made, not from its first
  // step: a connection whose run() ends before the watchdog's first step (a peer that closed at
  // once) was freed under it, and the watchdog then waited on a freed timer.
  boost::asio::awaitable<void> watchdog(std::shared_ptr<Connection> self);
  // false when the connection must end (peer gone, deadline, or an unreadable header answered). A
  // request over the request bytes budget is answered `busy` here and the next one read.
  boost::asio::awaitable<bool> read_request(proto::FrameHeader& header);
  // Takes the budget for a payload of `length` bytes; the `busy` message when over it.
  std::optional<std::string> reserve_payload(std::uint64_t length);
  // Reads the payload into m_payload, which grows as the bytes arrive, not to the header's length.
  boost::asio::awaitable<bool> read_payload(std::uint64_t length);
  // Reads and drops a refused request's payload, by `read_by` (its read deadline).
  boost::asio::awaitable<bool> discard_payload(std::uint64_t length, Clock::time_point read_by);
  // Every request goes through its op table row (daemon/ops/op_table.hpp): refused by the checks
  // every op shares, or run by run_row, and counted.
  boost::asio::awaitable<Reply> dispatch(const proto::FrameHeader& header);
  // The same for a request whose row runs right here on the worker without awaiting (LOOKUP, PING,
  // STATS, ...): answered with no coroutine frame and no turn of the event loop. Empty: the row
  // needs dispatch() (another lane, an awaited handler, the remotes).
  std::optional<Reply> dispatch_here(const proto::FrameHeader& header);
  ops::OpCall make_call(const proto::FrameHeader& header);
  Reply finish(const proto::FrameHeader& header, Reply reply);  // after the handler: bytes released, counted
  // Runs the row's handler where the row says: awaited, here on the worker, or on its lane within
  // the lane's limits.
  boost::asio::awaitable<Reply> run_row(const ops::OpRow& row, ops::OpCall& call);
  void release_payload();  // the request no longer needs its bytes
  // Writes the reply, of which the first `already_sent` bytes went out through send_reply_now().
  boost::asio::awaitable<bool> write_reply(const proto::FrameHeader& request, const Reply& reply,
                                           std::size_t already_sent = 0);
  // One non-blocking send of a reply whose image goes as bytes (send_now.hpp): how many bytes the
  // socket took (all: done; fewer: write_reply sends the rest), or empty when the peer is gone.
  std::optional<std::size_t> send_reply_now(const proto::FrameHeader& request, const Reply& reply);
  // A LOOKUP hit whose image goes as a sealed memfd (PROTOCOL.md §4 "Images by descriptor").
  boost::asio::awaitable<bool> write_with_descriptor(const proto::FrameHeader& request, const Reply& reply,
                                                     const SealedImage& sealed);
  // `now`: the time the budget runs from, when the caller has just read the clock.
  void enter(Phase phase, Clock::duration budget, Clock::time_point now = Clock::now());
  void close();
  // Whether run() reads another request: always until the drain, then only what was already sent.
  bool keep_serving();
  bool request_waiting();  // bytes of a request have arrived and are not read yet
  // Bytes read from the socket and not yet taken by a request.
  std::size_t buffered() const { return m_input_end - m_input_begin; }
  // Moves up to `size` buffered bytes to `out` (nullptr: drops them); returns how many.
  std::size_t take_buffered(std::uint8_t* out, std::size_t size);
  // Reads what has arrived, at least one byte, behind the buffered bytes; false when the peer left.
  boost::asio::awaitable<bool> read_more();
  // One read without waiting behind the buffered bytes, unless the socket is known to be empty
  // (m_input_drained); what it finds is buffered. Errors and the peer's leaving are left for
  // read_more() to meet again.
  void read_now();
  // A request whose whole frame (header and a payload up to the input buffer) is buffered, after
  // read_now() when it is not: taken here, with no coroutine and no wait. false: read_request()
  // takes it (nothing or part of a frame here, a larger payload, or a header to refuse).
  bool take_request_now(proto::FrameHeader& header);
  // Waiting for a request: the idle deadline, or the drain's grace.
  void enter_idle(Clock::time_point now = Clock::now());
  Reply draining_reply();  // `unavailable`: past k_max_answers_while_draining

  Socket m_socket;
  Executor m_executor;
  boost::asio::steady_timer m_timer;
  ServerContext& m_context;
  policy::PeerCredentials m_peer;
  Phase m_phase = Phase::idle;
  std::uint64_t m_requests_served = 0;
  std::uint64_t m_answers_while_draining = 0;
  Clock::time_point m_deadline = Clock::time_point::max();
  std::vector<std::uint8_t> m_payload;
  policy::RequestBytesBudget::Hold m_payload_budget;  // what the current request reserved
  // Rationale: one read takes whatever has arrived, so a small request's header and payload (and
  // the next request's, when the client pipelines) cost one system call, not one each: a 4 KB
  // LOOKUP hit spent a tenth of its daemon CPU in its two reads (docs/benchmarks.md "The hit path
  // at the limit"). Larger payloads are read straight into m_payload.
  static constexpr std::size_t k_input_buffer_bytes = 4096;
  std::array<std::uint8_t, k_input_buffer_bytes> m_input{};
  std::size_t m_input_begin = 0;
  std::size_t m_input_end = 0;
  // A descriptor received with the input (SCM_RIGHTS) that no request has taken yet.
  common::UniqueFd m_received_fd;
  // The last read came back short (or found nothing) and the event loop has not run since: the
  // socket is most likely empty, so read_more() and run() wait for readiness without first trying
  // a read that would fail (EAGAIN). Every co_await of an Asio operation (which may run the loop)
  // clears it first. The failed read was 0.38 recvmsg per 4 KB hit at 8 clients
  // (docs/benchmarks.md "One turn per request").
  // Rationale: waiting is safe even where the guess is wrong. A short read does not prove the
  // socket empty (it stops at the mark of an out-of-band byte, MSG_OOB, with bytes behind it), and
  // the reactor may have taken those bytes' edge (epoll, edge-triggered) during an earlier turn;
  // but Asio 1.74 re-arms the descriptor (EPOLL_CTL_MOD) whenever it starts a wait, and the kernel
  // then reports the readiness the socket has at that moment (docs/architecture.md "A request's
  // path"; tests/fault/test_daemon_request_timing.cpp).
  bool m_input_drained = false;
};

}  // namespace jitcache::daemon::server
