#include <daemon/server/connection.hpp>

#include <algorithm>
#include <array>

#include <spdlog/spdlog.h>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <daemon/ops/op_call.hpp>
#include <daemon/ops/op_table.hpp>
#include <daemon/remote/defer_remote.hpp>
#include <daemon/server/descriptor_passing.hpp>
#include <daemon/server/memory_return.hpp>
#include <daemon/server/run_on.hpp>
#include <daemon/server/send_now.hpp>

namespace jitcache::daemon::server {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using ops::error_reply;
using ops::image_as_bytes;
using proto::Status;
using stats::Counters;

namespace {
// Rationale: a connection keeps its payload buffer between requests to avoid reallocating for every
// LOOKUP, but gives back anything above this after a larger request so idle connections stay
// small. A request up to this size takes no request bytes budget: max_connections connections hold
// at most max_connections times this (64 MiB at the default), and a uid at its budget can still
// LOOKUP. It is also the first step in which a larger payload's buffer grows.
constexpr std::size_t k_retained_buffer_bytes = 64 << 10;
}  // namespace

Connection::Connection(Socket socket, Executor executor, ServerContext& context, policy::PeerCredentials peer)
    : m_socket(std::move(socket)), m_executor(executor), m_timer(executor), m_context(context), m_peer(peer) {}

void Connection::enter(Phase phase, Clock::duration budget, Clock::time_point now) {
  m_phase = phase;
  m_deadline = budget == Clock::duration::max() ? Clock::time_point::max() : now + budget;
  // Rationale: moving the timer cancels the watchdog's wait and wakes it, so only a deadline earlier
  // than the pending expiry moves it; a later one is picked up when the watchdog wakes. That is one
  // wake-up per request instead of one per phase.
  if (m_deadline < m_timer.expiry()) m_timer.expires_at(m_deadline);
}

void Connection::close() {
  boost::system::error_code ignored;
  m_socket.close(ignored);
  m_timer.cancel();
}

namespace {
// How long a draining daemon waits for the first request of a connection that has sent none.
constexpr auto k_first_request_grace = std::chrono::milliseconds(250);
// Rationale: a draining connection answers the requests its client had already sent (pipelined)
// rather than reset it, but a client that never stops sending must not hold the drain open until
// drain_timeout: past this many answers since the drain began the next request is answered
// `unavailable` (PROTOCOL.md §1 "Restarts") and the connection closes. No jitcache client has more
// than a few requests outstanding on one connection.
constexpr std::uint64_t k_max_answers_while_draining = 64;
}  // namespace

bool Connection::request_waiting() {
  if (buffered() > 0) return true;
  boost::system::error_code ec;
  const std::size_t bytes = m_socket.available(ec);
  return !ec && bytes > 0;
}

void Connection::close_if_idle() {
  asio::post(m_executor, [self = shared_from_this()] {
    if (self->m_phase != Phase::idle) return;
    if (self->m_requests_served > 0) {
      // Bytes already here are a request the client sent before it could know of the drain: the
      // pending read takes it and it is answered (run()). Closing over unread bytes would reset
      // the connection, and the client would not know whether its request ran.
      if (!self->request_waiting()) self->close();
      return;
    }
    // Rationale: a connection that has not sent its first request was most likely made just before
    // the drain by a client about to send one (libjitcache connects first and digests the PTX
    // meanwhile): serve that request rather than drop it, within a short grace. The run loop ends
    // after it, as draining says.
    self->enter(Phase::idle, k_first_request_grace);
  });
}

void Connection::force_close() {
  asio::post(m_executor, [self = shared_from_this()] { self->close(); });
}

awaitable<void> Connection::watchdog([[maybe_unused]] std::shared_ptr<Connection> self) {
  while (m_socket.is_open()) {
    boost::system::error_code ec;
    co_await m_timer.async_wait(asio::redirect_error(use_awaitable, ec));
    if (!m_socket.is_open()) break;
    if (m_deadline > Clock::now()) {
      m_timer.expires_at(m_deadline);  // woken early, or the deadline moved later: wait again
    } else {
      Counters::add(m_phase == Phase::idle ? m_context.counters.dropped_idle : m_context.counters.dropped_deadline);
      spdlog::debug("closing connection of {}: {} deadline passed", m_peer.describe(),
                    m_phase == Phase::idle      ? "idle"
                    : m_phase == Phase::writing ? "write"
                                                : "read");
      close();
    }
  }
}

std::size_t Connection::take_buffered(std::uint8_t* out, std::size_t size) {
  const std::size_t taken = std::min(size, buffered());
  if (out != nullptr) std::copy_n(m_input.data() + m_input_begin, taken, out);
  m_input_begin += taken;
  if (m_input_begin == m_input_end) m_input_begin = m_input_end = 0;
  return taken;
}

awaitable<bool> Connection::read_more() {
  if (m_input_end == m_input.size()) {
    std::copy(m_input.data() + m_input_begin, m_input.data() + m_input_end, m_input.data());
    m_input_end -= m_input_begin;
    m_input_begin = 0;
  }
  // Rationale: recvmsg, not a plain read, so that a descriptor a client sends on a request's first
  // byte (header flag request_fd: a bundle file) is received; a plain read would have the kernel
  // close it. Tried first without waiting, as Asio's own reads are.
  for (;;) {
    if (!m_input_drained) {
      const std::size_t space = m_input.size() - m_input_end;
      auto got = receive_with_descriptor(m_socket.native_handle(),
                                         std::span<std::uint8_t>(m_input.data() + m_input_end, space));
      if (got) {
        if (got->bytes == 0) co_return false;
        m_input_end += got->bytes;
        // A read shorter than the room most likely emptied the socket, unless a descriptor ended it
        // early (m_input_drained says why a wrong guess costs nothing).
        m_input_drained = got->bytes < space && !got->fd;
        // A newer descriptor replaces one no request took.
        if (got->fd) m_received_fd = std::move(got->fd);
        co_return true;
      }
      if (got.error().code != common::ErrorCode::unavailable) co_return false;
    }
    m_input_drained = false;
    boost::system::error_code ec;
    co_await m_socket.async_wait(Socket::wait_read, asio::redirect_error(use_awaitable, ec));
    if (ec) co_return false;
  }
}

void Connection::read_now() {
  if (m_input_drained) return;
  if (m_input_end == m_input.size()) {
    std::copy(m_input.data() + m_input_begin, m_input.data() + m_input_end, m_input.data());
    m_input_end -= m_input_begin;
    m_input_begin = 0;
  }
  const std::size_t space = m_input.size() - m_input_end;
  if (space == 0) return;
  auto got =
      receive_with_descriptor(m_socket.native_handle(), std::span<std::uint8_t>(m_input.data() + m_input_end, space));
  if (!got) {
    m_input_drained = got.error().code == common::ErrorCode::unavailable;
    return;
  }
  m_input_end += got->bytes;
  m_input_drained = got->bytes > 0 && got->bytes < space && !got->fd;
  if (got->fd) m_received_fd = std::move(got->fd);
}

bool Connection::take_request_now(proto::FrameHeader& header) {
  proto::HeaderBytes raw{};
  if (buffered() < raw.size()) read_now();
  if (buffered() < raw.size()) return false;
  std::copy_n(m_input.data() + m_input_begin, raw.size(), raw.data());
  // A header to refuse, or a payload not here whole, is read_request()'s (which reads the header
  // again from the buffer).
  if (proto::check_request_header(raw, m_context.config.max_frame_bytes, header)) return false;
  if (header.payload_length > buffered() - raw.size()) return false;
  take_buffered(nullptr, raw.size());
  m_payload.resize(static_cast<std::size_t>(header.payload_length));
  take_buffered(m_payload.data(), m_payload.size());
  return true;
}

void Connection::enter_idle(Clock::time_point now) {
  // Draining, only a connection that has not been served yet reads, and only within the grace.
  enter(Phase::idle,
        m_context.draining.load() ? std::chrono::duration_cast<Clock::duration>(k_first_request_grace)
                                  : std::chrono::duration_cast<Clock::duration>(m_context.config.idle_timeout),
        now);
}

awaitable<bool> Connection::read_request(proto::FrameHeader& header) {
  for (;;) {
    proto::HeaderBytes raw{};

    enter_idle();
    // The peer left, or the idle deadline closed the socket.
    if (buffered() == 0 && !co_await read_more()) co_return false;

    enter(Phase::reading, m_context.config.read_deadline);
    while (buffered() < raw.size()) {
      if (!co_await read_more()) co_return false;
    }
    take_buffered(raw.data(), raw.size());

    if (auto refused = proto::check_request_header(raw, m_context.config.max_frame_bytes, header)) {
      // The stream can no longer be trusted to be framed: answer, then close (PROTOCOL.md §1).
      Counters::add(m_context.counters.dropped_protocol);
      m_context.counters.count_error(refused->status);
      spdlog::debug("refusing a frame from {}: {}", m_peer.describe(), refused->message);
      proto::FrameHeader reply_header;
      reply_header.op = static_cast<proto::Op>(refused->op_echo);
      reply_header.request_id = refused->request_id_echo;
      Reply reply = error_reply(refused->status, refused->message);
      proto::FrameHeader request_echo = reply_header;
      co_await write_reply(request_echo, reply);
      co_return false;
    }

    auto over_budget = reserve_payload(header.payload_length);
    if (!over_budget) co_return co_await read_payload(header.payload_length);
    // Answered before its payload is read, so a client gets `busy` at once; the payload is then
    // read and dropped within the request's own read deadline, and the connection stays usable.
    const Clock::time_point read_by = m_deadline;
    m_context.counters.count_error(Status::busy);
    if (!co_await write_reply(header, error_reply(Status::busy, *over_budget))) co_return false;
    if (!co_await discard_payload(header.payload_length, read_by)) co_return false;
    if (m_context.draining.load()) co_return false;
  }
}

std::optional<std::string> Connection::reserve_payload(std::uint64_t length) {
  if (length <= k_retained_buffer_bytes) return std::nullopt;
  policy::RequestBytesBudget& budget = m_context.request_bytes;
  const auto refusal = budget.try_reserve(m_peer.uid, length);
  if (refusal == policy::RequestBytesBudget::Refusal::none) {
    m_payload_budget = policy::RequestBytesBudget::Hold(budget, m_peer.uid, length);
    return std::nullopt;
  }
  Counters::add(m_context.counters.requests_refused_bytes);
  std::string message;
  if (refusal == policy::RequestBytesBudget::Refusal::per_uid) {
    Counters::add(m_context.counters.requests_refused_bytes_per_uid);
    message = "uid " + std::to_string(m_peer.uid) + " has " + std::to_string(budget.reserved(m_peer.uid)) +
              " bytes of requests in flight; this one's " + std::to_string(length) +
              " would pass request_bytes_per_uid (" + std::to_string(budget.per_uid_limit()) + "); try again later";
  } else {
    message = "the daemon has " + std::to_string(budget.reserved_total()) +
              " bytes of requests in flight; this one's " + std::to_string(length) +
              " would pass request_bytes_total (" + std::to_string(budget.total_limit()) + "); try again later";
  }
  spdlog::debug("refusing a request of {}: {}", m_peer.describe(), message);
  return message;
}

awaitable<bool> Connection::read_payload(std::uint64_t length) {
  // Rationale: the buffer at most doubles per step and each step is read in full before the next,
  // so what a request holds is at most twice what it has sent (plus the first step), never what
  // its header claims (16 connections sending only a header once took the daemon to 1 GiB).
  m_payload.clear();
  boost::system::error_code ec;
  std::size_t have = 0;
  while (have < length) {
    const std::size_t next = static_cast<std::size_t>(
        std::min<std::uint64_t>(length, std::max<std::uint64_t>(k_retained_buffer_bytes, 2 * std::uint64_t{have})));
    m_payload.resize(next);
    have += take_buffered(m_payload.data() + have, next - have);
    if (have < next) {
      m_input_drained = false;
      co_await asio::async_read(m_socket, asio::buffer(m_payload.data() + have, next - have),
                                asio::redirect_error(use_awaitable, ec));
      if (ec) co_return false;
    }
    have = next;
  }
  co_return true;
}

awaitable<bool> Connection::discard_payload(std::uint64_t length, Clock::time_point read_by) {
  const auto now = Clock::now();
  enter(Phase::reading, read_by > now ? read_by - now : Clock::duration::zero());
  m_payload.resize(static_cast<std::size_t>(std::min<std::uint64_t>(length, k_retained_buffer_bytes)));
  boost::system::error_code ec;
  const std::uint64_t from_buffer =
      take_buffered(nullptr, static_cast<std::size_t>(std::min<std::uint64_t>(length, buffered())));
  for (std::uint64_t left = length - from_buffer; left > 0;) {
    m_input_drained = false;
    const std::size_t step = static_cast<std::size_t>(std::min<std::uint64_t>(left, m_payload.size()));
    co_await asio::async_read(m_socket, asio::buffer(m_payload.data(), step), asio::redirect_error(use_awaitable, ec));
    if (ec) co_return false;
    left -= step;
  }
  co_return true;
}

void Connection::release_payload() {
  m_payload_budget.reset();
  if (m_payload.capacity() > k_retained_buffer_bytes) std::vector<std::uint8_t>().swap(m_payload);
}

ops::OpCall Connection::make_call(const proto::FrameHeader& header) {
  // A descriptor goes to the request whose header says it carries one (PROTOCOL.md §2 "Header
  // flags"); taken by an op that has no use for it, it is closed when this request is done.
  common::UniqueFd descriptor;
  if ((header.flags & proto::k_flag_request_fd) != 0) descriptor = std::exchange(m_received_fd, {});
  return ops::OpCall{header.op,        header.flags,         m_peer, m_payload, proto::Bytes(m_payload),
                     m_payload_budget, std::move(descriptor)};
}

Reply Connection::finish(const proto::FrameHeader& header, Reply reply) {
  // The reply owns what it sends (a LOOKUP's image is the store's buffer), so the request's bytes
  // and their budget go before the reply is written, however slowly the client reads; a large
  // request's memory goes back to the system (memory_return.hpp).
  release_payload();
  return_memory_after(static_cast<std::size_t>(header.payload_length));
  return m_context.handler.counted(std::move(reply));
}

std::optional<Reply> Connection::dispatch_here(const proto::FrameHeader& header) {
  const ops::OpRow* row = ops::find_op(header.op);
  if (row != nullptr && (row->async_handler != nullptr || row->lane != ops::Lane::worker ||
                         (row->asks_remotes && m_context.remote_lane != nullptr))) {
    return std::nullopt;
  }
  enter(Phase::processing, Clock::duration::max());
  ops::RequestHandler& handler = m_context.handler;
  ops::OpCall call = make_call(header);
  handler.count_request();
  Reply reply;
  if (auto refused = handler.refusal(row, call)) {
    reply = std::move(*refused);
  } else {
    reply = (handler.*row->handler)(call);
  }
  return finish(header, std::move(reply));
}

awaitable<Reply> Connection::dispatch(const proto::FrameHeader& header) {
  m_input_drained = false;  // the handler may wait: the event loop runs
  enter(Phase::processing, Clock::duration::max());
  ops::RequestHandler& handler = m_context.handler;
  ops::OpCall call = make_call(header);
  const ops::OpRow* row = ops::find_op(header.op);
  handler.count_request();
  Reply reply;
  if (auto refused = handler.refusal(row, call)) {
    reply = std::move(*refused);
  } else {
    reply = co_await run_row(*row, call);
  }
  co_return finish(header, std::move(reply));
}

awaitable<Reply> Connection::run_row(const ops::OpRow& row, ops::OpCall& call) {
  ops::RequestHandler& handler = m_context.handler;
  if (row.async_handler != nullptr) co_return co_await (handler.*row.async_handler)(call);
  auto work = [&handler, &row, &call] { return (handler.*row.handler)(call); };
  if (row.lane == ops::Lane::worker) {
    // Rationale: a worker-lane op runs right here, on the worker thread that read it: handing it to
    // a pool and back cost two thread wake-ups per LOOKUP, more than the SQLite read itself
    // (docs/benchmarks.md). The accept loop has its own thread, so a slow read never stalls
    // accepting.
    if (!row.asks_remotes || m_context.remote_lane == nullptr) co_return work();
    // With a remote tier: answered here from the local store, or, where the remotes must be asked,
    // on the remote lane, so a slow remote never holds this thread and its hits
    // (remote/defer_remote.hpp). The scope ends before the coroutine suspends.
    bool deferred = false;
    Reply reply;
    {
      remote::DeferRemote scope;
      reply = work();
      deferred = scope.deferred();
    }
    if (!deferred) co_return reply;
    co_return co_await run_on(m_context.remote_lane->get_executor(), work);
  }
  LaneGate* gate = m_context.lanes.gate(row.lane);
  if (gate != nullptr && !gate->try_enter(call.peer.uid)) {
    const ops::LaneLimits limits = gate->limits();
    co_return ops::error_reply(Status::busy, std::string(proto::op_name(row.op)) + ": uid " +
                                                 std::to_string(call.peer.uid) + " has " +
                                                 std::to_string(limits.per_uid) + " " + ops::ops_of_lane(row.lane) +
                                                 " requests waiting or running, or the daemon has " +
                                                 std::to_string(limits.total) + "; try again");
  }
  Reply reply = co_await run_on(m_context.lanes.pool(row.lane).get_executor(), work);
  if (gate != nullptr) gate->leave(call.peer.uid);
  co_return reply;
}

namespace {
// The reply's frame as it goes out when its image goes as bytes: header, payload, image.
std::array<asio::const_buffer, 3> reply_buffers(const proto::HeaderBytes& raw, const Reply& reply) {
  return {asio::buffer(raw), asio::buffer(reply.payload),
          reply.image ? asio::buffer(*reply.image) : asio::const_buffer()};
}

proto::HeaderBytes reply_header(const proto::FrameHeader& request, const Reply& reply) {
  proto::FrameHeader header;
  header.op = request.op;
  header.status = reply.status;
  header.request_id = request.request_id;
  header.payload_length = reply.payload.size() + (reply.image ? reply.image->size() : 0);
  return proto::encode_header(header);
}
}  // namespace

std::optional<std::size_t> Connection::send_reply_now(const proto::FrameHeader& request, const Reply& reply) {
  const proto::HeaderBytes raw = reply_header(request, reply);
  const auto buffers = reply_buffers(raw, reply);
  std::array<iovec, 3> parts{};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    parts[i] = iovec{const_cast<void*>(buffers[i].data()), buffers[i].size()};
  }
  auto sent = send_now(m_socket.native_handle(), parts);
  if (!sent) {
    spdlog::debug("reply to {} not delivered: {}", m_peer.describe(), sent.error().message);
    return std::nullopt;
  }
  return *sent;
}

awaitable<bool> Connection::write_reply(const proto::FrameHeader& request, const Reply& reply,
                                        std::size_t already_sent) {
  m_input_drained = false;  // waiting to write runs the event loop
  enter(Phase::writing, m_context.config.write_deadline);
  if (reply.image_by_descriptor) {
    auto sealed = m_context.descriptors.get(reply.image);
    if (sealed) {
      Counters::add(m_context.counters.images_by_descriptor);
      co_return co_await write_with_descriptor(request, reply, **sealed);
    }
    // Out of descriptors or memory for a memfd: the bytes go through the socket as for any client
    // that did not ask for a descriptor, which the client takes the same way.
    Counters::add(m_context.counters.images_by_descriptor_failed);
    if (const std::uint64_t failures = m_context.descriptor_warnings.admit()) {
      spdlog::warn("image sent as bytes, not by descriptor: {} ({} time(s) since the last warning)",
                   sealed.error().message, failures);
    }
    const Reply as_bytes = image_as_bytes(reply);
    co_return co_await write_reply(request, as_bytes);
  }
  const proto::HeaderBytes raw = reply_header(request, reply);
  // Scatter-gather: the image goes from the store's buffer to the socket without another copy.
  auto buffers = reply_buffers(raw, reply);
  for (auto& buffer : buffers) {  // what send_reply_now() sent already
    const std::size_t skip = std::min(already_sent, buffer.size());
    buffer += skip;
    already_sent -= skip;
  }
  boost::system::error_code ec;
  co_await asio::async_write(m_socket, buffers, asio::redirect_error(use_awaitable, ec));
  if (ec) {
    spdlog::debug("reply to {} not delivered: {}", m_peer.describe(), ec.message());
    co_return false;
  }
  co_return true;
}

awaitable<bool> Connection::write_with_descriptor(const proto::FrameHeader& request, const Reply& reply,
                                                  const SealedImage& sealed) {
  m_input_drained = false;
  proto::FrameHeader header;
  header.op = request.op;
  header.status = reply.status;
  header.flags = proto::k_flag_image_fd;
  header.request_id = request.request_id;
  header.payload_length = reply.payload.size();
  const proto::HeaderBytes raw = proto::encode_header(header);
  std::vector<std::uint8_t> frame(raw.begin(), raw.end());
  frame.insert(frame.end(), reply.payload.begin(), reply.payload.end());

  // The descriptor rides on the frame's first byte (SCM_RIGHTS): one sendmsg, then the rest of the
  // frame as usual if the socket took only part of it.
  for (;;) {
    auto sent = send_with_descriptor(m_socket.native_handle(), proto::Bytes(frame), sealed.fd());
    if (sent) {
      if (*sent < frame.size()) {
        boost::system::error_code ec;
        co_await asio::async_write(m_socket, asio::buffer(frame.data() + *sent, frame.size() - *sent),
                                   asio::redirect_error(use_awaitable, ec));
        if (ec) co_return false;
      }
      co_return true;
    }
    if (sent.error().code != common::ErrorCode::unavailable) {
      spdlog::debug("reply to {} not delivered: {}", m_peer.describe(), sent.error().message);
      co_return false;
    }
    boost::system::error_code ec;
    co_await m_socket.async_wait(Socket::wait_write, asio::redirect_error(use_awaitable, ec));
    if (ec) co_return false;
  }
}

bool Connection::keep_serving() {
  if (!m_context.draining.load()) return true;
  // A connection accepted as the drain began still gets its first request served (close_if_idle),
  // and a request already sent behind the one just answered is answered too: the drain finishes
  // what the client had sent and closes only a connection with nothing left to read. A request
  // sent after that close fails to send (EPIPE) and the client sends it again on a new connection.
  return m_requests_served == 0 || request_waiting();
}

Reply Connection::draining_reply() {
  m_context.counters.count_error(Status::unavailable);
  return error_reply(Status::unavailable, "jitcached is shutting down; send the request again on a new connection");
}

awaitable<void> Connection::run() {
  auto self = shared_from_this();
  asio::co_spawn(m_executor, watchdog(self), asio::detached);
  Counters::add(m_context.counters.connections);
  Counters::add(m_context.counters.connections_total);

  // Rationale: a small request that is here whole and runs on this thread (a LOOKUP hit) is read,
  // answered and written with no coroutine frame, no Asio operation and no turn of the event loop;
  // the connection then waits for readiness once. Everything else takes the awaited path, which
  // handles every case (docs/benchmarks.md "One turn per request").
  std::optional<Clock::time_point> answered_at;  // when the last reply was written
  while (keep_serving()) {
    proto::FrameHeader header;
    if (!take_request_now(header)) {
      if (buffered() == 0 && m_input_drained) {
        // Between two requests with the socket seen empty: the wait for the next one is done here,
        // in this frame, not in read_request()'s and read_more()'s (two coroutine frames a hit).
        // Rationale: from when the last reply was written, read for its latency just before: the
        // clock is read twice per request, not three times (docs/benchmarks.md "One turn per request").
        enter_idle(answered_at.value_or(Clock::now()));
        answered_at.reset();
        m_input_drained = false;
        boost::system::error_code ec;
        co_await m_socket.async_wait(Socket::wait_read, asio::redirect_error(use_awaitable, ec));
        if (ec) break;
        continue;
      }
      if (!co_await read_request(header)) break;
    }
    const auto started = Clock::now();
    const bool draining = m_context.draining.load();
    const bool turn_away = draining && m_answers_while_draining >= k_max_answers_while_draining;
    // Rationale: an if, not `?:` — GCC 12 destroys the result of a co_await inside a conditional
    // expression twice (a double free).
    Reply reply;
    if (turn_away) {
      reply = draining_reply();
    } else if (auto here = dispatch_here(header)) {
      reply = std::move(*here);
    } else {
      reply = co_await dispatch(header);
    }
    std::size_t sent = 0;
    if (!reply.image_by_descriptor) {
      const auto now = send_reply_now(header, reply);
      if (!now) break;
      sent = *now;
    }
    const std::size_t frame_bytes =
        proto::k_header_size + reply.payload.size() + (reply.image ? reply.image->size() : 0);
    if ((reply.image_by_descriptor || sent < frame_bytes) && !co_await write_reply(header, reply, sent)) break;
    answered_at = Clock::now();
    m_context.counters.latency.record(header.op,
                                      std::chrono::duration_cast<std::chrono::microseconds>(*answered_at - started));
    ++m_requests_served;
    if (draining) ++m_answers_while_draining;
    if (turn_away) break;
  }
  close();
  Counters::sub(m_context.counters.connections);
}

}  // namespace jitcache::daemon::server
