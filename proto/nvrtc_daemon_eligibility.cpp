#include <proto/nvrtc_daemon_eligibility.hpp>

#include <vector>

#include <proto/include_record_lines.hpp>

namespace jitcache::proto {

namespace {

// Whether `path` climbs out of the directory it is relative to ("..", "../x", "x/../y", "x/..").
bool has_parent_part(std::string_view path) {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == "..") return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::optional<std::string> nvrtc_daemon_refusal(const NvrtcOptions& options, std::string_view include_record) {
  if (!options.include_paths.empty()) return "it names an include path (" + options.include_paths.front() + ")";
  if (!options.pre_includes.empty()) return "it pre-includes a file (" + options.pre_includes.front() + ")";
  if (options.debug_info) return "-G or -lineinfo makes the output name the working directory";
  const auto lines = include_record_lines(include_record);
  if (!lines) return std::string("its include record is malformed");
  for (const auto& [path, state] : *lines) {
    if (path.empty() || path.front() == '/') return "it may read the absolute path " + std::string(path);
    if (has_parent_part(path)) return "it may read " + std::string(path) + ", which has a \"..\" part";
    if (state != "absent") return "it may read " + std::string(path) + " from disk (" + std::string(state) + ")";
  }
  return std::nullopt;
}

common::Result<NvrtcCompileInput> nvrtc_compile_input_of(const NvrtcProgramText& program, const NvrtcIdentity& identity,
                                                         std::string include_record) {
  std::vector<const char*> options;
  options.reserve(program.options.size());
  for (const std::string& option : program.options) options.push_back(option.c_str());
  auto canonical = canonicalize_nvrtc_options(static_cast<int>(options.size()), options.data());
  JITCACHE_TRY(canonical);
  NvrtcCompileInput input;
  input.identity = identity;
  input.name = program.name;
  input.source = program.source;
  input.headers = program.headers;
  input.options = std::move(*canonical);
  input.name_expressions = program.name_expressions;
  input.include_record = std::move(include_record);
  return input;
}

}  // namespace jitcache::proto
