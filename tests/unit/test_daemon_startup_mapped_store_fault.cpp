#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <daemon/startup/mapped_store_fault.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::daemon::startup::explain_mapped_store_faults;

namespace {

// In a child: map a file, truncate it underneath the mapping and read the page, as an I/O error
// under a mapped store page would. Returns what the child wrote to the pipe and how it ended.
struct ChildEnd {
  std::string said;
  int status = 0;
};

ChildEnd read_a_truncated_mapping(const std::string& path) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    explain_mapped_store_faults(pipe_fds[1]);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ::ftruncate(fd, 4096) != 0) ::_exit(10);
    void* mapped = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED || ::ftruncate(fd, 0) != 0) ::_exit(11);
    const volatile char* byte = static_cast<const volatile char*>(mapped);
    const char value = *byte;  // SIGBUS: the page is beyond the end of the file now
    ::_exit(value == 0 ? 12 : 13);
  }
  ::close(pipe_fds[1]);
  ChildEnd end;
  char buffer[1024];
  ssize_t n = 0;
  while ((n = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0) end.said.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  REQUIRE(::waitpid(child, &end.status, 0) == child);
  return end;
}

}  // namespace

TEST_CASE("mapped store fault: a SIGBUS is explained, then ends the process as SIGBUS") {
  jitcache::testing::TempDir dir;
  const ChildEnd end = read_a_truncated_mapping(dir.file("mapped"));
  REQUIRE(WIFSIGNALED(end.status));
  CHECK(WTERMSIG(end.status) == SIGBUS);
  CHECK_THAT(end.said, Catch::Contains("SIGBUS") && Catch::Contains("store_mmap_size = 0"));
}
