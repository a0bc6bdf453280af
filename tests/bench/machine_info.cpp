#include <tests/bench/machine_info.hpp>

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace jitcache::bench {

namespace {

// The value of the first "name<spaces>: value" line of a /proc file, or "" when there is none.
std::string proc_field(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto value = line.find_first_not_of(" \t", colon + 1);
    return value == std::string::npos ? std::string() : line.substr(value);
  }
  return {};
}

}  // namespace

MachineInfo read_machine_info() {
  MachineInfo info;
  info.cpu_model = proc_field("/proc/cpuinfo", "model name");
  if (info.cpu_model.empty()) info.cpu_model = "unknown";

  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  info.online_cpus = online > 0 ? static_cast<unsigned>(online) : 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  info.usable_cpus =
      ::sched_getaffinity(0, sizeof(set), &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set)) : info.online_cpus;

  std::istringstream mem_total(proc_field("/proc/meminfo", "MemTotal"));  // "<n> kB"
  std::uint64_t kib = 0;
  if (mem_total >> kib) info.memory_mib = kib / 1024;

  std::ifstream loadavg("/proc/loadavg");
  loadavg >> info.load_average;

  struct utsname names {};
  if (::uname(&names) == 0) {
    info.kernel = std::string(names.sysname) + " " + names.release + " " + names.machine;
  } else {
    info.kernel = "unknown";
  }
  return info;
}

}  // namespace jitcache::bench
