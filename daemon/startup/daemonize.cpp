#include <daemon/startup/daemonize.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace jitcache::daemon::startup {

namespace {
void write_text(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void parent_waits(int fd) {
  std::string report;
  char buffer[512];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;) report.append(buffer, static_cast<std::size_t>(n));
  if (report == "ready") std::_Exit(0);
  if (report.rfind("error:", 0) == 0) {
    std::fprintf(stderr, "jitcached: %s\n", report.substr(6).c_str());
  } else {
    std::fprintf(stderr, "jitcached: the daemon exited during start-up; see its log\n");
  }
  std::_Exit(1);
}
}  // namespace

Detacher Detacher::detach() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::perror("jitcached: pipe");
    std::exit(1);
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("jitcached: fork");
    std::exit(1);
  }
  if (pid > 0) {
    ::close(fds[1]);
    parent_waits(fds[0]);
  }
  ::close(fds[0]);
  ::setsid();
  if (int null = ::open("/dev/null", O_RDWR); null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    if (null > 2) ::close(null);
  }
  return Detacher(fds[1]);
}

void Detacher::report_ready() {
  write_text(m_fd, "ready");
  ::close(m_fd);
  m_fd = -1;
}

void Detacher::report_failure(const std::string& message) {
  write_text(m_fd, "error:" + message);
  ::close(m_fd);
  m_fd = -1;
}

}  // namespace jitcache::daemon::startup
