// OwnedSocket (client/src/transport/owned_socket.hpp): the library's socket is kept above the floor,
// and a number the program closed and reused is forgotten, never used or closed.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include <client/src/transport/owned_socket.hpp>

using jitcache::client::transport::descriptor_floor;
using jitcache::client::transport::descriptor_table_size;
using jitcache::client::transport::OwnedSocket;

namespace {
int new_socket() { return ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); }
bool is_open(int fd) { return ::fcntl(fd, F_GETFD) >= 0; }
}  // namespace

TEST_CASE("owned socket: it lives at or above the floor, never at 0-2, and the low number is closed") {
  const int low = new_socket();
  REQUIRE(low >= 0);
  OwnedSocket socket = OwnedSocket::adopt(low);
  CHECK(socket.raw() >= descriptor_floor());
  CHECK(socket.raw() > 2);
  CHECK_FALSE(is_open(low));
  CHECK(socket.verified() == socket.raw());
}

TEST_CASE("owned socket: in a process with threads the socket never grows the descriptor table") {
  // A second thread shares the table: growing it now would wait for an RCU grace period (6-15 ms).
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  std::thread other([&] {
    std::unique_lock lock(mutex);
    wake.wait(lock, [&] { return done; });
  });
  const int table_before = descriptor_table_size();
  OwnedSocket socket = OwnedSocket::adopt(new_socket());
  const int table_after = descriptor_table_size();
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  wake.notify_all();
  other.join();
  REQUIRE(table_before > 0);
  CHECK(table_after == table_before);
  CHECK(socket.raw() > 2);
  CHECK(socket.raw() < table_before);
  CHECK(socket.raw() >= descriptor_floor());
}

TEST_CASE("owned socket: a number the program closed and reopened is forgotten and the program's file stays open") {
  OwnedSocket socket = OwnedSocket::adopt(new_socket());
  const int number = socket.raw();
  REQUIRE(number >= 0);
  ::close(number);  // the program's close_range(3, ~0U)
  const int file = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(::dup2(file, number) == number);  // the program's own file under the number
  CHECK(socket.verified() == -1);
  socket.release();
  CHECK(is_open(number));
  ::close(number);
  ::close(file);
}

TEST_CASE("owned socket: another socket under the same number is not ours either") {
  OwnedSocket socket = OwnedSocket::adopt(new_socket());
  const int number = socket.raw();
  const int other = new_socket();
  REQUIRE(::dup2(other, number) == number);
  CHECK(socket.verified() == -1);
  CHECK(is_open(number));
  ::close(number);
  ::close(other);
}

TEST_CASE("owned socket: in a child of fork() the parent's socket is not used and the child's copy is closed") {
  OwnedSocket socket = OwnedSocket::adopt(new_socket());
  const int number = socket.raw();
  const pid_t child = ::fork();
  if (child == 0) {
    const bool forgotten = socket.verified() == -1 && !is_open(number);
    ::_exit(forgotten ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(socket.verified() == number);  // still the parent's
}
