// What a benchmark ran on, printed beside its figures so that they are only ever compared with
// figures from a like machine. Thread safety: free function, reads /proc and uname.
#pragma once

#include <cstdint>
#include <string>

namespace jitcache::bench {

struct MachineInfo {
  std::string cpu_model;         // /proc/cpuinfo "model name" of the first CPU
  unsigned online_cpus = 0;      // logical CPUs the kernel runs
  unsigned usable_cpus = 0;      // of those, the ones this process may run on (affinity, cgroups cpusets)
  std::uint64_t memory_mib = 0;  // /proc/meminfo MemTotal
  std::string kernel;            // uname: sysname release machine
  // /proc/loadavg's 1-minute figure when read: above the CPU count, other work shared the machine
  // and the figures are pessimistic.
  double load_average = 0;
};

MachineInfo read_machine_info();

}  // namespace jitcache::bench
