#include <tests/bench/log_tail.hpp>

#include <fstream>
#include <iterator>

namespace jitcache::bench {

std::string log_tail(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "(no log at " + path + ")";
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty()) return "(" + path + " is empty)";
  if (text.size() > max_bytes) {
    text.erase(0, text.size() - max_bytes);
    if (const auto line_start = text.find('\n'); line_start != std::string::npos) text.erase(0, line_start + 1);
  }
  return text;
}

}  // namespace jitcache::bench
