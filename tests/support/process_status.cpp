#include <tests/support/process_status.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace jitcache::testing {

std::uint64_t status_bytes(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream value(line.substr(field.size() + 1));
    std::uint64_t kib = 0;
    value >> kib;
    return kib * 1024;
  }
  throw std::runtime_error("no " + field + " in /proc/" + std::to_string(pid) + "/status");
}

std::size_t open_descriptors(pid_t pid) {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    ++count;
  }
  return count;
}

DescriptorLimit descriptor_limit(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
  const std::string name = "Max open files";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) != 0) continue;
    std::istringstream values(line.substr(name.size()));
    DescriptorLimit limit;
    values >> limit.soft >> limit.hard;
    return limit;
  }
  throw std::runtime_error("no \"Max open files\" in /proc/" + std::to_string(pid) + "/limits");
}

}  // namespace jitcache::testing
