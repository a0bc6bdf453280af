#include <tests/bench/process_usage.hpp>

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace jitcache::bench {

namespace {

std::optional<std::chrono::microseconds> cpu_time_of(pid_t pid) {
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

// /proc/<pid>/status counts the main thread only; the threads' own files hold the rest.
std::optional<std::uint64_t> voluntary_switches_of(pid_t pid) {
  constexpr std::string_view k_field = "voluntary_ctxt_switches:";
  std::error_code error;
  std::filesystem::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", error);
  if (error) return std::nullopt;
  std::uint64_t total = 0;
  for (const auto& task : tasks) {
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind(k_field, 0) == 0) {
        total += std::stoull(line.substr(k_field.size()));
        break;
      }
    }
  }
  return total;
}

}  // namespace

std::optional<pid_t> socket_peer_pid(int fd) {
  struct ucred credentials {};
  socklen_t length = sizeof(credentials);
  if (fd < 0 || ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return std::nullopt;
  if (credentials.pid <= 0) return std::nullopt;
  return credentials.pid;
}

std::optional<ProcessUsage> process_usage(pid_t pid) {
  const auto cpu_time = cpu_time_of(pid);
  const auto switches = voluntary_switches_of(pid);
  if (!cpu_time || !switches) return std::nullopt;
  return ProcessUsage{*cpu_time, *switches};
}

ProcessUsage own_usage() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto to_us = [](const timeval& t) {
    return std::chrono::microseconds(static_cast<long long>(t.tv_sec) * 1'000'000 + t.tv_usec);
  };
  return ProcessUsage{to_us(usage.ru_utime) + to_us(usage.ru_stime), static_cast<std::uint64_t>(usage.ru_nvcsw)};
}

}  // namespace jitcache::bench
