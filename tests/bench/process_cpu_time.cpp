#include "process_cpu_time.hpp"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace jitcache::bench {

std::optional<pid_t> socket_peer_pid(int fd) {
  struct ucred credentials {};
  socklen_t length = sizeof(credentials);
  if (fd < 0 || ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return std::nullopt;
  if (credentials.pid <= 0) return std::nullopt;
  return credentials.pid;
}

std::optional<std::chrono::microseconds> process_cpu_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) is in parentheses and may itself hold spaces or ')': fields are
  // counted from the last ')'. utime and stime are fields 14 and 15.
  const auto name_end = stat.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(name_end + 1));
  std::string skipped;
  for (int field = 3; field < 14; ++field) fields >> skipped;
  unsigned long long user_ticks = 0;
  unsigned long long system_ticks = 0;
  if (!(fields >> user_ticks >> system_ticks)) return std::nullopt;
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  if (ticks_per_second <= 0) return std::nullopt;
  return std::chrono::microseconds((user_ticks + system_ticks) * 1'000'000ull /
                                   static_cast<unsigned long long>(ticks_per_second));
}

std::chrono::microseconds own_cpu_time() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto to_us = [](const timeval& t) {
    return std::chrono::microseconds(static_cast<long long>(t.tv_sec) * 1'000'000 + t.tv_usec);
  };
  return to_us(usage.ru_utime) + to_us(usage.ru_stime);
}

}  // namespace jitcache::bench
