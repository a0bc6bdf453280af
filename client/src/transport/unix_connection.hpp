// A blocking connection to jitcached over its Unix socket, with a deadline on every call.
//
// This is the client side of the framing in proto/PROTOCOL.md: it writes one request frame, reads
// one reply frame, and never waits longer than its timeouts, so a hung daemon costs a caller a
// bounded delay. It lives inside other people's processes: no exceptions escape, no signals are
// touched (MSG_NOSIGNAL instead of SIGPIPE handlers), and the descriptor is re-verified before every
// send, receive and close (owned_socket.hpp): a number the program closed and reused is forgotten
// and the call fails as a lost connection. Every send and receive is MSG_DONTWAIT, waits are
// poll(2) with the deadline, so even a descriptor that is somehow not ours never blocks a call. It speaks only to a
// daemon it trusts (daemon_trust.hpp): the socket's path is checked before connecting, the peer before the first byte
// is sent. Thread safety: one object per thread; move-only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <client/src/transport/byte_buffer.hpp>
#include <client/src/transport/daemon_trust.hpp>
#include <client/src/transport/owned_socket.hpp>
#include <common/result.hpp>
#include <common/unique_fd.hpp>
#include <proto/messages.hpp>
#include <proto/wire.hpp>

namespace jitcache::client::transport {

using common::Result;
using proto::Bytes;

struct ConnectOptions {
  std::string socket_path;
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds io_timeout{30000};
  std::uint64_t max_reply_bytes = proto::k_default_max_frame_bytes + 4096;
  // How long to poll for a reply on the CPU before sleeping in poll(2). Rationale: a thread that
  // sleeps while the daemon works is woken by an interrupt when the reply lands, which costs tens
  // to hundreds of microseconds on a virtual machine; a cache hit is a few of those. 0: never spin.
  std::chrono::microseconds reply_spin{0};
  // Who may own the socket's path and listen on it. libjitcache and the CLI add the system daemon's
  // users (DaemonTrust::from_environment()).
  DaemonTrust trust = DaemonTrust::callers_own();
  // How long connect() keeps trying while nothing listens at the path (ECONNREFUSED) or the path
  // is missing (ENOENT): what a client sees while a daemon that binds its own socket restarts
  // (docs/operations.md "Restarts"). 0: one attempt. Under socket activation a connect never fails
  // this way during a restart; it waits in the backlog (connect_timeout, then io_timeout).
  std::chrono::milliseconds restart_wait{0};
  // The wait for the connection's first reply (its HELLO), when not 0, instead of io_timeout. Under
  // socket activation a connection is accepted into systemd's backlog whether or not a daemon will
  // ever serve it; the CLI bounds that wait, and a timeout then says who holds the socket
  // (socket_access.hpp, no_answer_text).
  std::chrono::milliseconds first_reply_timeout{0};
};

// Where a call() failed when the daemon closed or reset the connection (ErrorCode::unavailable
// without a reply status): while the request was being sent, so the daemon cannot have run it (it
// runs a request only once the whole frame has arrived), or after, so it may have.
enum class CallLoss { none, while_sending, while_awaiting_reply };

struct Reply {
  proto::FrameHeader header;
  ByteBuffer payload;
  common::UniqueFd descriptor;  // the file descriptor that came with the frame, if any (SCM_RIGHTS)
};

class UnixConnection {
 public:
  static Result<UnixConnection> connect(const ConnectOptions& options);

  UnixConnection(UnixConnection&& other) noexcept;
  UnixConnection& operator=(UnixConnection&& other) noexcept;
  UnixConnection(const UnixConnection&) = delete;
  UnixConnection& operator=(const UnixConnection&) = delete;
  ~UnixConnection() = default;

  // One request, one reply. `tail` and then `trailer` are sent right after `payload` as part of the
  // same frame, so a large image goes from the caller's buffer to the socket without being copied
  // into `payload` (a PUT's fields after its image travel in `trailer`).
  // `flags` go into the request header (proto::k_flag_image_fd: a descriptor may come back).
  // `timeout`, when not zero, replaces io_timeout for this call (a COMPILE waits for a compile).
  // `attached_fd` (>= 0): a descriptor that rides on the request's first byte (SCM_RIGHTS); the
  // caller sets proto::k_flag_request_fd in `flags` (call_with_descriptor does both).
  Result<Reply> call(proto::Op op, const proto::Payload& payload, Bytes tail = {}, Bytes trailer = {},
                     std::uint16_t flags = 0, std::chrono::milliseconds timeout = {}, int attached_fd = -1);
  // A request whose file travels as a descriptor (EXPORT_BUNDLE, IMPORT_BUNDLE: PROTOCOL.md §2
  // "Header flags" request_fd). The caller keeps `fd` open and owns it.
  Result<Reply> call_with_descriptor(proto::Op op, const proto::Payload& payload, int fd,
                                     std::chrono::milliseconds timeout);

  // Sends bytes as they are: a frame whose reply is never read (HIT_NOTE), and tests that speak
  // the protocol wrongly on purpose.
  Result<void> send_raw(Bytes bytes);
  Result<Reply> read_reply();
  Result<Reply> read_reply(std::chrono::steady_clock::time_point deadline);
  // Reads until the peer closes; true when it closed within the io timeout.
  bool wait_for_close();

  // The descriptor as last verified (tests and diagnostics; -1 once it was found not ours).
  int fd() const { return m_socket.raw(); }
  // Whether the descriptor is still this connection's socket in this process (owned_socket.hpp);
  // false forgets it. A pooled connection is checked so before it is lent again.
  bool still_ours() { return m_socket.verified() >= 0; }
  const ConnectOptions& options() const { return m_options; }
  // How the last call() failed, if the connection was lost under it; none otherwise.
  CallLoss last_loss() const { return m_last_loss; }
  // Raises (or lowers) the largest reply payload this connection accepts.
  void set_max_reply_bytes(std::uint64_t bytes) { m_options.max_reply_bytes = bytes; }

 private:
  UnixConnection(OwnedSocket socket, const ConnectOptions& options) : m_socket(std::move(socket)), m_options(options) {}
  // The descriptor, verified (owned_socket.hpp), or an ErrorCode::unavailable error.
  Result<int> socket_fd();
  Result<void> write_all(Bytes bytes, std::chrono::steady_clock::time_point deadline);
  // Sends `bytes` with `fd` attached to the first of them, then the rest as write_all does.
  Result<void> send_with_descriptor(Bytes bytes, int fd, std::chrono::steady_clock::time_point deadline);
  // Polls on the CPU while bytes arrived within the last `spin` (reply_spin), then sleeps in poll(2).
  // With `descriptor`, reads with recvmsg and keeps a file descriptor that arrives with the bytes
  // (a second one, which the protocol never sends, is closed).
  Result<void> read_exact(std::uint8_t* out, std::size_t size, std::chrono::steady_clock::time_point deadline,
                          std::chrono::microseconds spin = {}, common::UniqueFd* descriptor = nullptr);

  OwnedSocket m_socket;
  ConnectOptions m_options;
  std::uint32_t m_next_request_id = 1;
  CallLoss m_last_loss = CallLoss::none;
};

}  // namespace jitcache::client::transport
