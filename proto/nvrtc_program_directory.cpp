#include <proto/nvrtc_program_directory.hpp>

#include <algorithm>
#include <cctype>

#include <proto/include_record_lines.hpp>

namespace jitcache::proto {

namespace {

bool is_under(std::string_view path, std::string_view directory) {
  if (directory.back() == '/') return path.size() > directory.size() && path.starts_with(directory);
  return path.size() > directory.size() + 1 && path.starts_with(directory) && path[directory.size()] == '/';
}

std::string_view relative_to(std::string_view path, std::string_view directory) {
  return path.substr(directory.size() + (directory.back() == '/' ? 0 : 1));
}

// How PTX writes a string constant: `{47, 116, 109, 112}`.
std::string as_ptx_bytes(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(static_cast<unsigned char>(text[i]));
  }
  return out;
}

bool holds(const std::vector<std::uint8_t>& bytes, std::string_view text) {
  if (text.empty()) return false;
  return std::search(bytes.begin(), bytes.end(), text.begin(), text.end()) != bytes.end();
}

}  // namespace

std::string program_directory(std::string_view name) {
  const std::size_t slash = name.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return {};
  return std::string(name.substr(0, slash));
}

std::optional<std::string> record_relative_to_program(std::string_view record, std::string_view name) {
  const std::string directory = program_directory(name);
  if (directory.empty()) return std::nullopt;
  std::string out;
  out.reserve(record.size());
  const auto lines = include_record_lines(record);
  if (!lines) return std::nullopt;
  for (const auto& [path, state] : *lines) {
    if (is_under(path, directory)) {
      if (state != "absent" && path != name) return std::nullopt;
      out.push_back('D');
      out += relative_to(path, directory);
    } else {
      out.push_back('A');
      out += path;
    }
    out.push_back('\0');
    out += state;
    out.push_back('\n');
  }
  return out;
}

bool result_names_program(const NvrtcResult& result, std::string_view name) {
  // The name holds its directory: whatever names the name names the directory.
  const std::string directory = program_directory(name);
  const std::string_view text = directory.empty() ? name : std::string_view(directory);
  if (text.empty()) return false;
  const std::string ptx_text = as_ptx_bytes(text);
  for (const NvrtcOutputAnswer& output : result.outputs) {
    if (holds(output.bytes, text) || holds(output.bytes, ptx_text)) return true;
  }
  for (const NvrtcLoweredName& lowered : result.lowered_names) {
    if (lowered.lowered.find(text) != std::string::npos) return true;
  }
  return false;
}

namespace {
constexpr std::size_t k_max_served_log_bytes = std::size_t{64} << 20;
}  // namespace

bool plain_program_directory(std::string_view name) {
  const std::string directory = program_directory(name);
  if (directory.empty() || directory.front() != '/') return false;
  return std::all_of(directory.begin(), directory.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '/' || c == '.' || c == '_' || c == '+' || c == '-';
  });
}

std::optional<NvrtcResult> result_without_directory(const NvrtcResult& result, std::string_view name) {
  if (!plain_program_directory(name)) return std::nullopt;
  const std::string directory = program_directory(name);
  const std::string ptx_text = as_ptx_bytes(directory);
  for (std::size_t i = 0; i < result.outputs.size(); ++i) {
    if (i == static_cast<std::size_t>(NvrtcOutput::log)) continue;
    if (holds(result.outputs[i].bytes, directory) || holds(result.outputs[i].bytes, ptx_text)) return std::nullopt;
  }
  for (const NvrtcLoweredName& lowered : result.lowered_names) {
    if (lowered.lowered.find(directory) != std::string::npos) return std::nullopt;
  }
  const std::vector<std::uint8_t>& log = result.output(NvrtcOutput::log).bytes;
  const std::string_view text(reinterpret_cast<const char*>(log.data()), log.size());
  const auto path_byte = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("/._+-~").find(c) != std::string_view::npos;
  };
  NvrtcResult cut = result;
  std::vector<std::uint8_t>& kept = cut.output(NvrtcOutput::log).bytes;
  kept.clear();
  std::size_t from = 0;
  for (std::size_t at = text.find(directory); at != std::string_view::npos;
       at = text.find(directory, at + directory.size())) {
    // The whole name, after a byte no path holds: a diagnostic's place, not a longer path's middle.
    if (text.substr(at, name.size()) != name || (at > 0 && path_byte(text[at - 1]))) return std::nullopt;
    kept.insert(kept.end(), log.begin() + static_cast<std::ptrdiff_t>(from),
                log.begin() + static_cast<std::ptrdiff_t>(at));
    cut.log_directory_at.push_back(static_cast<std::uint32_t>(kept.size()));
    from = at + directory.size();
  }
  if (cut.log_directory_at.empty()) return std::nullopt;
  kept.insert(kept.end(), log.begin() + static_cast<std::ptrdiff_t>(from), log.end());
  return cut;
}

std::optional<NvrtcResult> result_in_directory(const NvrtcResult& result, std::string_view name) {
  if (result.log_directory_at.empty()) return result;
  if (!plain_program_directory(name)) return std::nullopt;
  const std::string directory = program_directory(name);
  const std::vector<std::uint8_t>& cut_log = result.output(NvrtcOutput::log).bytes;
  // Rationale: an entry is bytes a tenant wrote; many offsets and a long directory must not make
  // the program's process hold more than a log NVRTC could have written.
  if (cut_log.size() + result.log_directory_at.size() * directory.size() > k_max_served_log_bytes) return std::nullopt;
  NvrtcResult served = result;
  served.log_directory_at.clear();
  const std::vector<std::uint8_t>& log = result.output(NvrtcOutput::log).bytes;
  std::vector<std::uint8_t>& whole = served.output(NvrtcOutput::log).bytes;
  whole.clear();
  std::size_t from = 0;
  for (const std::uint32_t at : result.log_directory_at) {
    if (at < from || at > log.size()) return std::nullopt;
    whole.insert(whole.end(), log.begin() + static_cast<std::ptrdiff_t>(from),
                 log.begin() + static_cast<std::ptrdiff_t>(at));
    whole.insert(whole.end(), directory.begin(), directory.end());
    from = at;
  }
  whole.insert(whole.end(), log.begin() + static_cast<std::ptrdiff_t>(from), log.end());
  return served;
}

}  // namespace jitcache::proto
