#include <daemon/compile/worker_exchange.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace jitcache::daemon::compile {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t k_stderr_head_bytes = 4096;
// Rationale: how often a stop request is noticed, and how often the exit is polled for where the
// kernel has no pidfds; short enough for a prompt shutdown, long enough to cost nothing.
constexpr std::chrono::milliseconds k_tick{50};

enum class Drain { open, eof, overflow };

// Reads what is there; appends up to `keep` bytes in total and discards the rest when `discard`.
template <class Buffer>
Drain drain(int fd, Buffer& into, std::size_t keep, bool discard) {
  std::uint8_t chunk[65536];
  for (;;) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? Drain::open : Drain::eof;
    if (n == 0) return Drain::eof;
    const std::size_t room = keep > into.size() ? keep - into.size() : 0;
    if (static_cast<std::size_t>(n) > room && !discard) return Drain::overflow;
    into.insert(into.end(), chunk, chunk + std::min(room, static_cast<std::size_t>(n)));
  }
}

}  // namespace

Exchange exchange(WorkerProcess& process, proto::Bytes input, Clock::time_point deadline, const std::atomic<bool>& stop,
                  std::size_t max_stdout, Until until) {
  Exchange result;
  std::size_t written = 0;
  bool out_open = true;
  bool err_open = true;
  bool exited = false;
  if (input.empty()) process.close_stdin();

  while (out_open || err_open || !exited) {
    if (stop.load(std::memory_order_relaxed)) {
      result.end = Exchange::End::stopped;
      break;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      result.end = Exchange::End::deadline;
      break;
    }
    pollfd fds[4];
    nfds_t count = 0;
    const auto watch = [&](int fd, short events) {
      if (fd < 0) return -1;
      fds[count] = pollfd{fd, events, 0};
      return static_cast<int>(count++);
    };
    const int in_slot = watch(process.stdin_fd(), POLLOUT);
    const int out_slot = out_open ? watch(process.stdout_fd(), POLLIN) : -1;
    const int err_slot = err_open ? watch(process.stderr_fd(), POLLIN) : -1;
    const int exit_slot = exited ? -1 : watch(process.exit_fd(), POLLIN);
    const auto wait = std::min(std::chrono::ceil<std::chrono::milliseconds>(deadline - now), k_tick);
    if (::poll(fds, count, static_cast<int>(wait.count())) < 0 && errno != EINTR) {
      result.end = Exchange::End::failed;
      break;
    }

    if (in_slot >= 0 && fds[in_slot].revents != 0) {
      const ssize_t n = ::send(process.stdin_fd(), input.data() + written, input.size() - written, MSG_NOSIGNAL);
      if (n > 0) written += static_cast<std::size_t>(n);
      // Rationale: a worker that closed its stdin early does not want the rest; its exit status,
      // not a failed write, says what went wrong.
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) process.close_stdin();
    }
    if (out_slot >= 0 && fds[out_slot].revents != 0) {
      const Drain state = drain(process.stdout_fd(), result.stdout_bytes, max_stdout, false);
      if (state == Drain::overflow) {
        result.end = Exchange::End::overflow;
        break;
      }
      out_open = state == Drain::open;
    }
    if (err_slot >= 0 && fds[err_slot].revents != 0) {
      err_open = drain(process.stderr_fd(), result.stderr_head, k_stderr_head_bytes, true) == Drain::open;
    }
    // Without a pidfd (kernels before 5.3) the exit is taken to follow the pipes' EOF, and wait()
    // below blocks for it.
    if (exit_slot >= 0 ? fds[exit_slot].revents != 0 : process.exit_fd() < 0 && !out_open && !err_open) {
      exited = true;
    }
    if (until == Until::output_closed && !out_open && !err_open && !exited) {
      result.end = Exchange::End::output_closed;
      return result;
    }
  }
  if (result.end != Exchange::End::exited) process.kill();
  result.status = process.wait();
  return result;
}

void finish_exchange(WorkerProcess& process, Exchange& exchanged, Clock::time_point deadline,
                     const std::atomic<bool>& stop) {
  exchanged.end = Exchange::End::exited;
  while (process.exit_fd() >= 0) {
    if (stop.load(std::memory_order_relaxed)) {
      exchanged.end = Exchange::End::stopped;
      break;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      exchanged.end = Exchange::End::deadline;
      break;
    }
    pollfd exit_fd{process.exit_fd(), POLLIN, 0};
    const auto wait = std::min(std::chrono::ceil<std::chrono::milliseconds>(deadline - now), k_tick);
    const int ready = ::poll(&exit_fd, 1, static_cast<int>(wait.count()));
    if (ready < 0 && errno != EINTR) {
      exchanged.end = Exchange::End::failed;
      break;
    }
    if (ready > 0) break;
  }
  if (exchanged.end != Exchange::End::exited) process.kill();
  exchanged.status = process.wait();
}

}  // namespace jitcache::daemon::compile
