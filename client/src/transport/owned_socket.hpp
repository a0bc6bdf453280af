// OwnedSocket: a socket descriptor this library opened, kept with what proves it is still the same
// socket, because the program it lives in may close any descriptor number and reuse it.
//
// A program that runs close_range(3, ~0U), or a child that "closes all inherited descriptors", and
// then opens a file gets the number the library's socket had. Sending on that number would write
// protocol bytes into the program's file, reading would consume its data, closing would close its
// file. So the number is never trusted: before every use and before close the socket's identity
// (the inode fstat reports, unique per open socket, and that it is still a socket of the process
// that opened it) is checked; on a mismatch the number is forgotten, never closed.
// Rationale for the floor: a program that closes a descriptor and opens another gets the lowest
// free number; keeping the library's sockets high (F_DUPFD_CLOEXEC to k_descriptor_floor, or
// half of RLIMIT_NOFILE's soft limit when that is lower) means the program's reopened numbers
// rarely meet them at all, and they are never 0-2, which a program that closed its standard
// streams expects its next open() to get back. The floor also stays in the upper quarter of the
// descriptor table the process has now, never above it: a number past the table's end makes the
// kernel grow the table, and in a process with more than one thread (every CUDA program: the
// driver starts its own) growing it waits for an RCU grace period, 6-15 ms
// (docs/driver-facts.md §9).
// The check and the use are two system calls: another thread of the program could close and
// reuse the number between them. Nothing a process can do closes that window (the kernel has no
// "close if this inode"); the check removes every case in which the program had reused the number
// before the call began, which is the common one (docs/transparent.md "Descriptors").
// Thread safety: a move-only value; one thread at a time.
#pragma once

#include <sys/types.h>

#include <utility>

namespace jitcache::client::transport {

inline constexpr int k_descriptor_floor = 256;

class OwnedSocket {
 public:
  OwnedSocket() = default;
  // Takes a socket just created by this library: moves it to the floor (closing the low number it
  // had) and records its identity. Returns an empty object (errno set) when it cannot be recorded.
  static OwnedSocket adopt(int fd);

  OwnedSocket(OwnedSocket&& other) noexcept
      : m_fd(std::exchange(other.m_fd, -1)), m_device(other.m_device), m_inode(other.m_inode), m_pid(other.m_pid) {}
  OwnedSocket& operator=(OwnedSocket&& other) noexcept;
  OwnedSocket(const OwnedSocket&) = delete;
  OwnedSocket& operator=(const OwnedSocket&) = delete;
  // Closes the socket only when it is still this library's; otherwise forgets the number.
  ~OwnedSocket() { release(); }

  // The number, when it still names the socket this object opened in this process; -1 otherwise
  // (the number is then forgotten, and the caller treats the connection as lost). In a child of
  // fork() the socket is the parent's too: a request on it would mix with the parent's, so the
  // child's copy is closed and -1 returned.
  int verified();
  // The number as last verified, for diagnostics and tests; -1 when none.
  int raw() const { return m_fd; }
  // Closes the socket if it is still ours, forgets it either way.
  void release();

 private:
  bool still_ours() const;

  int m_fd = -1;
  dev_t m_device = 0;
  ino_t m_inode = 0;
  pid_t m_pid = 0;
};

// The lowest descriptor number this library moves its sockets to in this process (see above).
int descriptor_floor();
// Whether the soft RLIMIT_NOFILE is below twice k_descriptor_floor: descriptors are scarce here.
bool descriptor_limit_is_small();
// The size of this process's descriptor table now (FDSize in /proc/self/status); 0 when unknown.
int descriptor_table_size();

}  // namespace jitcache::client::transport
